//! The command-line tool's library half, shared with the tests and benches:
//! a constraint-system collector that produces `Assignment` data
//! ([`collector`]), the circuits the tool proves ([`circuits`]), bellperson
//! parameter generation and caching ([`params`]), the C ABI declared and
//! called as a foreign caller would ([`ffi`]), and the units the tool prints
//! sizes and rates in ([`units`]).

// Link the library so the `extern "C"` declarations in `ffi` resolve to it.
extern crate supraseal_c2;

pub mod bench;
pub mod circuits;
pub mod collector;
pub mod ffi;
pub mod kit;
pub mod params;
pub mod synthetic;
pub mod trace;
pub mod units;
pub mod upstream;
