package supraseal

// #include <stdlib.h>
// #include <string.h>
// #include "supraseal_c2.h"
import "C"

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// FixtureSet is one set written by `supraseal-c2 fixture --out DIR`
// (layout: ffi-tests/FIXTURES.md). The witness file is copied into C memory
// and the Provers point into it; Free releases it.
type FixtureSet struct {
	Name       string
	ParamsPath string
	Provers    Provers
	R, S       []Fr
	Expected   []Proof

	buf    unsafe.Pointer // C copy of the .witness file
	bufLen int
}

// LoadFixtures reads DIR/fixtures.txt and every set it lists.
func LoadFixtures(dir string) ([]*FixtureSet, error) {
	index, err := os.ReadFile(filepath.Join(dir, "fixtures.txt"))
	if err != nil {
		return nil, err
	}
	var sets []*FixtureSet
	sc := bufio.NewScanner(bytes.NewReader(index))
	for sc.Scan() {
		var name, params string
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d", &name, &params, &n); err != nil || n <= 0 {
			return nil, fmt.Errorf("fixtures.txt: bad line %q", sc.Text())
		}
		set, err := loadSet(dir, name, filepath.Join(dir, params), n)
		if err != nil {
			for _, s := range sets {
				s.Free()
			}
			return nil, fmt.Errorf("set %s: %w", name, err)
		}
		sets = append(sets, set)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("%s/fixtures.txt: no sets", dir)
	}
	return sets, nil
}

func readArray(path string, n, size int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != n*size {
		return nil, fmt.Errorf("%s: %d bytes, expected %d x %d", path, len(b), n, size)
	}
	return b, nil
}

func frs(b []byte) []Fr {
	out := make([]Fr, len(b)/FrSize)
	for i := range out {
		for l := 0; l < 4; l++ {
			out[i].limbs[l] = C.uint64_t(binary.LittleEndian.Uint64(b[i*FrSize+8*l:]))
		}
	}
	return out
}

func loadSet(dir, name, params string, n int) (*FixtureSet, error) {
	w, err := os.ReadFile(filepath.Join(dir, name+".witness"))
	if err != nil {
		return nil, err
	}
	layouts, err := parseWitness(w, n)
	if err != nil {
		return nil, err
	}
	// The Assignments point into a C copy of the file (cgo: no Go pointers).
	set := &FixtureSet{Name: name, ParamsPath: params, buf: C.CBytes(w), bufLen: len(w)}
	set.Provers = make(Provers, n)
	for i, l := range layouts {
		set.Provers[i] = l.assignment(set.buf)
	}
	for _, x := range []struct {
		ext string
		dst *[]Fr
	}{{".r", &set.R}, {".s", &set.S}} {
		b, err := readArray(filepath.Join(dir, name+x.ext), n, FrSize)
		if err != nil {
			set.Free()
			return nil, err
		}
		*x.dst = frs(b)
	}
	b, err := readArray(filepath.Join(dir, name+".proofs"), n, ProofSize)
	if err != nil {
		set.Free()
		return nil, err
	}
	set.Expected = make([]Proof, n)
	for i := range set.Expected {
		copy(set.Expected[i][:], b[i*ProofSize:])
	}
	return set, nil
}

// circuitLayout is one circuit of a .witness file: its 9 sizes and the
// byte offsets of its 8 arrays.
type circuitLayout struct {
	h   [9]uint64
	off [8]int
}

func (l *circuitLayout) assignment(base unsafe.Pointer) Assignment {
	at := func(j int) unsafe.Pointer { return unsafe.Add(base, l.off[j]) }
	h := l.h
	return Assignment{
		a_aux_density: (*C.uint64_t)(at(0)), a_aux_bit_len: C.size_t(h[0]), a_aux_popcount: C.size_t(h[1]),
		b_inp_density: (*C.uint64_t)(at(1)), b_inp_bit_len: C.size_t(h[2]), b_inp_popcount: C.size_t(h[3]),
		b_aux_density: (*C.uint64_t)(at(2)), b_aux_bit_len: C.size_t(h[4]), b_aux_popcount: C.size_t(h[5]),
		a: (*C.fr_t)(at(3)), b: (*C.fr_t)(at(4)), c: (*C.fr_t)(at(5)), abc_size: C.size_t(h[6]),
		inp_assignment_data: (*C.fr_t)(at(6)), inp_assignment_size: C.size_t(h[7]),
		aux_assignment_data: (*C.fr_t)(at(7)), aux_assignment_size: C.size_t(h[8]),
	}
}

// parseWitness checks the layout of a .witness file (FIXTURES.md) and
// returns where each circuit's arrays are.
func parseWitness(w []byte, n int) ([]circuitLayout, error) {
	off := 0
	truncated := func() error { return fmt.Errorf("witness truncated at byte %d", off) }
	u64 := func() (uint64, error) {
		if len(w)-off < 8 {
			return 0, truncated()
		}
		v := binary.LittleEndian.Uint64(w[off:])
		off += 8
		return v, nil
	}
	if len(w) < 16 || string(w[:8]) != "SC2WIT01" {
		return nil, fmt.Errorf("not a witness file (magic)")
	}
	off = 8
	if count, _ := u64(); count != uint64(n) {
		return nil, fmt.Errorf("witness has %d circuits, fixtures.txt says %d", count, n)
	}
	out := make([]circuitLayout, n)
	for i := range out {
		l := &out[i]
		for j := range l.h {
			v, err := u64()
			if err != nil {
				return nil, err
			}
			l.h[j] = v
		}
		h := l.h
		sizes := [8][2]uint64{
			{(h[0] + 63) / 64, 8}, {(h[2] + 63) / 64, 8}, {(h[4] + 63) / 64, 8},
			{h[6], FrSize}, {h[6], FrSize}, {h[6], FrSize}, {h[7], FrSize}, {h[8], FrSize},
		}
		for j, sz := range sizes {
			if count, size := sz[0], sz[1]; count > uint64(len(w)-off)/size {
				return nil, truncated()
			}
			l.off[j] = off
			off += int(sz[0] * sz[1])
		}
	}
	if off != len(w) {
		return nil, fmt.Errorf("witness has %d trailing bytes", len(w)-off)
	}
	return out, nil
}

// Free releases the C copy of the witness (the Provers become invalid).
func (s *FixtureSet) Free() {
	C.free(s.buf)
	s.buf, s.Provers = nil, nil
}

// WitnessCopy returns the set's Provers re-pointed into a fresh C copy of
// the witness data, and a function that wipes and frees that copy.
func (s *FixtureSet) WitnessCopy() (Provers, func()) {
	buf := C.malloc(C.size_t(s.bufLen))
	C.memcpy(buf, s.buf, C.size_t(s.bufLen))
	p := make(Provers, len(s.Provers))
	for i, a := range s.Provers {
		shift := func(q unsafe.Pointer) unsafe.Pointer { return unsafe.Add(buf, uintptr(q)-uintptr(s.buf)) }
		a.a_aux_density = (*C.uint64_t)(shift(unsafe.Pointer(a.a_aux_density)))
		a.b_inp_density = (*C.uint64_t)(shift(unsafe.Pointer(a.b_inp_density)))
		a.b_aux_density = (*C.uint64_t)(shift(unsafe.Pointer(a.b_aux_density)))
		a.a = (*C.fr_t)(shift(unsafe.Pointer(a.a)))
		a.b = (*C.fr_t)(shift(unsafe.Pointer(a.b)))
		a.c = (*C.fr_t)(shift(unsafe.Pointer(a.c)))
		a.inp_assignment_data = (*C.fr_t)(shift(unsafe.Pointer(a.inp_assignment_data)))
		a.aux_assignment_data = (*C.fr_t)(shift(unsafe.Pointer(a.aux_assignment_data)))
		p[i] = a
	}
	return p, func() {
		C.memset(buf, 0xff, C.size_t(s.bufLen))
		C.free(buf)
	}
}
