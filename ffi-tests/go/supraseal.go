// Package supraseal calls the supraseal-c2 C ABI from Go through cgo, the
// way a Go caller (Curio, lotus) links the library: the header and the
// shared library found with pkg-config (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
// after scripts/install.sh PREFIX; LD_LIBRARY_PATH=PREFIX/lib at run time).
//
// Every RustError is turned into a Go error (*Error, which unwraps to its
// syscall.Errno) and its message is freed with C.free.
package supraseal

/*
#cgo pkg-config: supraseal-c2
#include <stdlib.h>
#include "supraseal_c2.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Sizes of the ABI types (docs/ARCHITECTURE.md §2).
const (
	FrSize         = 32
	ProofSize      = 384
	AssignmentSize = 136
)

// Fr is the header's fr_t: 4 little-endian u64 limbs, Montgomery form.
type Fr = C.fr_t

// Proof is one groth16_proof in its 384-byte ABI layout.
type Proof [ProofSize]byte

// Assignment is the header's Assignment (one circuit's witness).
type Assignment = C.Assignment

// Error is a failed call: the errno-style code and the library's message.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("supraseal-c2: %s (code %d)", e.Message, e.Code) }

// Unwrap gives the code as a syscall.Errno, so errors.Is(err, syscall.ENOENT) works.
func (e *Error) Unwrap() error { return syscall.Errno(e.Code) }

// check converts a returned RustError and frees its message.
func check(e C.RustError) error {
	msg := ""
	if e.message != nil {
		msg = C.GoString(e.message)
		C.free(unsafe.Pointer(e.message))
	}
	if e.code == 0 {
		return nil
	}
	return &Error{Code: int(e.code), Message: msg}
}

// SRS is one reference to a loaded params file.
type SRS struct{ h C.SRS }

// Open loads a params file (create_SRS); cache shares one key per path.
func Open(path string, cache bool) (*SRS, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	s := &SRS{}
	if err := check(C.create_SRS(&s.h, cpath, C.bool(cache))); err != nil {
		return nil, err
	}
	return s, nil
}

// Clone returns one more reference (clone_SRS).
func (s *SRS) Clone() *SRS { return &SRS{h: C.clone_SRS(&s.h)} }

// Drop releases this reference (drop_SRS); a second Drop is a no-op.
func (s *SRS) Drop() { C.drop_SRS(&s.h) }

// Evict removes the path's cache entry (evict_SRS).
func (s *SRS) Evict() { C.evict_SRS(&s.h) }

// Key identifies the loaded key behind the handle (0 when empty).
func (s *SRS) Key() uintptr { return uintptr(s.h.ptr) }

// GPUMutex is a lock handle (create_gpu_mutex); nil selects the default lock.
type GPUMutex struct{ p unsafe.Pointer }

func NewGPUMutex() *GPUMutex { return &GPUMutex{C.create_gpu_mutex()} }
func (m *GPUMutex) Destroy() {
	C.destroy_gpu_mutex(m.p)
	m.p = nil
}
func (m *GPUMutex) raw() unsafe.Pointer {
	if m == nil {
		return nil
	}
	return m.p
}

// Provers is an array of Assignments whose data lives in C memory (cgo
// forbids passing Go memory that holds Go pointers).
type Provers []Assignment

func ptrOrNil[T any](v []T) *T {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

func lengths(provers Provers, r, s []Fr) error {
	if len(r) != len(provers) || len(s) != len(provers) {
		return &Error{Code: int(syscall.EINVAL), Message: fmt.Sprintf("go wrapper: %d provers, %d r, %d s", len(provers), len(r), len(s))}
	}
	return nil
}

// Prove runs generate_groth16_proofs_c for len(provers) circuits.
func Prove(provers Provers, r, s []Fr, srs *SRS, mtx *GPUMutex, gpuIndex int) ([]Proof, error) {
	if err := lengths(provers, r, s); err != nil {
		return nil, err
	}
	proofs := make([]C.groth16_proof, len(provers))
	err := check(C.generate_groth16_proofs_c(ptrOrNil(provers), C.size_t(len(provers)), ptrOrNil(r), ptrOrNil(s),
		ptrOrNil(proofs), srsPtr(srs), mtx.raw(), C.int(gpuIndex)))
	if err != nil {
		return nil, err
	}
	return toProofs(proofs), nil
}

// ProveRaw is Prove with the circuit count passed as given (for bad calls).
func ProveRaw(provers *Assignment, n int, r, s []Fr, srs *SRS) error {
	proofs := make([]C.groth16_proof, 1)
	return check(C.generate_groth16_proofs_c(provers, C.size_t(n), ptrOrNil(r), ptrOrNil(s), ptrOrNil(proofs),
		srsPtr(srs), nil, -1))
}

func srsPtr(s *SRS) *C.SRS {
	if s == nil {
		return nil
	}
	return &s.h
}

func toProofs(p []C.groth16_proof) []Proof {
	out := make([]Proof, len(p))
	for i := range p {
		out[i] = *(*Proof)(unsafe.Pointer(&p[i]))
	}
	return out
}

// Pending is a split-form proof between start and finalize.
type Pending struct {
	p unsafe.Pointer
	n int
}

// Start runs generate_groth16_proofs_start_c. The handle owns what it needs:
// the inputs may be freed before Finalize.
func Start(provers Provers, r, s []Fr, srs *SRS, mtx *GPUMutex, gpuIndex int) (*Pending, error) {
	if err := lengths(provers, r, s); err != nil {
		return nil, err
	}
	// C memory for the out pointer: cgo forbids passing a Go pointer to
	// memory that will receive a C pointer only when it holds Go pointers,
	// but keeping it in C memory makes the ownership obvious.
	out := (*unsafe.Pointer)(C.malloc(C.size_t(unsafe.Sizeof(unsafe.Pointer(nil)))))
	defer C.free(unsafe.Pointer(out))
	*out = nil
	err := check(C.generate_groth16_proofs_start_c(ptrOrNil(provers), C.size_t(len(provers)), ptrOrNil(r), ptrOrNil(s),
		srsPtr(srs), mtx.raw(), C.int(gpuIndex), out))
	if err != nil {
		if *out != nil {
			return nil, fmt.Errorf("start failed but left a handle: %w", err)
		}
		return nil, err
	}
	return &Pending{p: *out, n: len(provers)}, nil
}

// StartNilOut calls start with pending_out = NULL (must fail with EINVAL).
func StartNilOut(provers Provers, r, s []Fr, srs *SRS) error {
	return check(C.generate_groth16_proofs_start_c(ptrOrNil(provers), C.size_t(len(provers)), ptrOrNil(r), ptrOrNil(s),
		srsPtr(srs), nil, -1, nil))
}

// Finalize runs finalize_groth16_proof_c (which frees the handle).
func (p *Pending) Finalize() ([]Proof, error) {
	proofs := make([]C.groth16_proof, p.n)
	if err := check(C.finalize_groth16_proof_c(p.p, ptrOrNil(proofs))); err != nil {
		return nil, err
	}
	return toProofs(proofs), nil
}

// Destroy frees the handle without finalizing (destroy_pending_proof).
func (p *Pending) Destroy() { C.destroy_pending_proof(p.p) }

// FinalizeNil calls finalize_groth16_proof_c(NULL, ...).
func FinalizeNil() error {
	var proof C.groth16_proof
	return check(C.finalize_groth16_proof_c(nil, &proof))
}

// DestroyNil calls destroy_pending_proof(NULL); CloneNil clone_SRS(NULL).
func DestroyNil()       { C.destroy_pending_proof(nil) }
func CloneNil() *SRS    { return &SRS{h: C.clone_SRS(nil)} }
func DropNil()          { C.drop_SRS(nil) }
func EvictNil()         { C.evict_SRS(nil) }
func OpenNilPath() error { return check(C.create_SRS(&(&SRS{}).h, nil, true)) }
