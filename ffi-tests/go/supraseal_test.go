package supraseal

// The C test (ffi-tests/c/test_abi.c) from Go: fixtures from
// `supraseal-c2 fixture --out DIR`, DIR in SUPRASEAL_C2_FIXTURES; expected
// proofs from bellperson, compared byte for byte.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func fixtures(t *testing.T) (string, []*FixtureSet) {
	t.Helper()
	dir := os.Getenv("SUPRASEAL_C2_FIXTURES")
	if dir == "" {
		t.Fatal("SUPRASEAL_C2_FIXTURES is not set (run ffi-tests/run.sh, or `supraseal-c2 fixture --out DIR`)")
	}
	sets, err := LoadFixtures(dir)
	if err != nil {
		t.Fatalf("loading fixtures: %v", err)
	}
	t.Cleanup(func() {
		for _, s := range sets {
			s.Free()
		}
	})
	return dir, sets
}

func open(t *testing.T, path string, cache bool) *SRS {
	t.Helper()
	s, err := Open(path, cache)
	if err != nil {
		t.Fatalf("create_SRS(%s): %v", path, err)
	}
	return s
}

func sameProofs(t *testing.T, what string, got, want []Proof) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d proofs, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: proof %d differs from bellperson's", what, i)
		}
	}
}

// wantError checks the code and that the message mentions each of needles.
func wantError(t *testing.T, what string, err error, code syscall.Errno, needles ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want a supraseal-c2 error with code %d", what, err, code)
		return
	}
	t.Logf("%s -> %v", what, err)
	if !errors.Is(err, code) {
		t.Errorf("%s: code %d, want %d (%v)", what, e.Code, code, code)
	}
	if e.Message == "" {
		t.Errorf("%s: empty message", what)
	}
	for _, n := range needles {
		if !strings.Contains(e.Message, n) {
			t.Errorf("%s: message %q does not mention %q", what, e.Message, n)
		}
	}
}

func TestProofsMatchBellperson(t *testing.T) {
	_, sets := fixtures(t)
	for _, f := range sets {
		f := f
		t.Run(f.Name, func(t *testing.T) {
			srs := open(t, f.ParamsPath, false)
			defer srs.Drop()
			got, err := Prove(f.Provers, f.R, f.S, srs, nil, -1)
			if err != nil {
				t.Fatal(err)
			}
			sameProofs(t, "one call", got, f.Expected)

			mtx := NewGPUMutex()
			defer mtx.Destroy()
			for i := range f.Provers {
				one, err := Prove(f.Provers[i:i+1], f.R[i:i+1], f.S[i:i+1], srs, mtx, 0)
				if err != nil {
					t.Fatal(err)
				}
				sameProofs(t, "per-circuit call with a lock handle", one, f.Expected[i:i+1])
			}
			swapped, err := Prove(f.Provers[:1], f.S[:1], f.R[:1], srs, nil, -1)
			if err != nil {
				t.Fatal(err)
			}
			if swapped[0] == f.Expected[0] {
				t.Error("swapping r and s changed nothing")
			}
		})
	}
}

func TestSplitForm(t *testing.T) {
	_, sets := fixtures(t)
	f := sets[0]
	srs := open(t, f.ParamsPath, true)
	provers, wipe := f.WitnessCopy()
	r, s := append([]Fr(nil), f.R...), append([]Fr(nil), f.S...)
	pending, err := Start(provers, r, s, srs, nil, -1)
	// The handle owns its inputs: wipe and free them, and drop the SRS, first.
	wipe()
	for i := range r {
		r[i], s[i] = Fr{}, Fr{}
	}
	srs.Drop()
	if err != nil {
		t.Fatal(err)
	}
	got, err := pending.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	sameProofs(t, "start + finalize", got, f.Expected)
	_, err = pending.Finalize()
	wantError(t, "finalize twice", err, syscall.EINVAL)
	wantError(t, "finalize(NULL)", FinalizeNil(), syscall.EINVAL)

	srs = open(t, f.ParamsPath, true)
	defer srs.Drop()
	for i := 0; i < 2; i++ {
		p, err := Start(f.Provers, f.R, f.S, srs, nil, -1)
		if err != nil {
			t.Fatal(err)
		}
		p.Destroy() // without finalize
	}
	DestroyNil()
	wantError(t, "start with pending_out = NULL", StartNilOut(f.Provers, f.R, f.S, srs), syscall.EINVAL, "pending_out")
	_, err = Start(nil, nil, nil, srs, nil, -1)
	wantError(t, "start with no provers", err, syscall.EINVAL)
}

func TestSRSHandles(t *testing.T) {
	_, sets := fixtures(t)
	f := sets[0]
	a, b := open(t, f.ParamsPath, true), open(t, f.ParamsPath, true)
	if a.Key() == 0 || a.Key() != b.Key() {
		t.Error("two cached loads of one path give different keys")
	}
	c := a.Clone()
	if c.Key() != a.Key() {
		t.Error("clone_SRS gave another key")
	}
	a.Drop()
	if a.Key() != 0 {
		t.Error("drop_SRS did not empty the handle")
	}
	a.Drop()
	DropNil()
	b.Drop()
	got, err := Prove(f.Provers, f.R, f.S, c, nil, -1)
	if err != nil {
		t.Fatal(err)
	}
	sameProofs(t, "clone after the original was dropped", got, f.Expected)

	c.Evict()
	EvictNil()
	d := open(t, f.ParamsPath, true)
	if d.Key() == c.Key() {
		t.Error("evict_SRS did not drop the cache entry")
	}
	got, err = Prove(f.Provers, f.R, f.S, d, nil, -1)
	if err != nil {
		t.Fatal(err)
	}
	sameProofs(t, "reloaded key", got, f.Expected)
	e := open(t, f.ParamsPath, false)
	if e.Key() == d.Key() {
		t.Error("cache = false returned the cached key")
	}
	if CloneNil().Key() != 0 {
		t.Error("clone_SRS(NULL) is not empty")
	}
	c.Drop()
	d.Drop()
	e.Drop()
}

func TestBadCalls(t *testing.T) {
	dir, sets := fixtures(t)
	f := sets[0]
	srs := open(t, f.ParamsPath, true)
	defer srs.Drop()

	wantError(t, "provers = NULL", ProveRaw(nil, len(f.Provers), f.R, f.S, srs), syscall.EINVAL, "provers")
	wantError(t, "srs = NULL", ProveRaw(&f.Provers[0], 1, f.R, f.S, nil), syscall.EINVAL, "srs")
	bad := f.Provers[0]
	bad.a_aux_popcount++
	wantError(t, "a_aux_popcount off by one", ProveRaw(&bad, 1, f.R, f.S, srs), syscall.EINVAL, "popcount")

	missing := filepath.Join(dir, "does-not-exist.params")
	_, err := Open(missing, true)
	wantError(t, "missing params file", err, syscall.ENOENT, missing)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing params file: errors.Is(err, os.ErrNotExist) is false")
	}
	wantError(t, "params_path = NULL", OpenNilPath(), syscall.EINVAL)

	params, err := os.ReadFile(f.ParamsPath)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.params")
	if err := os.WriteFile(truncated, params[:len(params)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(truncated, false)
	wantError(t, "truncated params file", err, syscall.EINVAL, truncated)

	got, err := Prove(f.Provers, f.R, f.S, srs, nil, -1)
	if err != nil {
		t.Fatal(err)
	}
	sameProofs(t, "after errors", got, f.Expected)
}
