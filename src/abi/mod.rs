//! The C ABI (docs/ARCHITECTURE.md §2): `#[repr(C)]` types and the exported functions.
//! Nothing else in the crate is reachable from C.

pub mod exports;
pub mod handles;
pub(crate) mod intake;
pub mod types;

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{code, Error, Result};

/// Runs `f` and converts its result, or a panic, into a value for C.
/// No panic crosses the ABI: a caught panic becomes `EFAULT` with the panic
/// message and the function's name.
pub(crate) fn guard<T>(func: &str, on_panic: impl FnOnce(Error) -> T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            let what = crate::error::panic_message(payload.as_ref());
            on_panic(Error::new(code::EFAULT, format!("{func}: internal error (panic): {what}")))
        }
    }
}

/// [`guard`] for functions that return a `RustError`. Every message names the
/// exported function: it is prefixed with `func: ` unless it already starts so.
pub(crate) fn guard_err(func: &str, f: impl FnOnce() -> Result<()>) -> types::RustError {
    guard(func, types::RustError::from, || {
        f().map_err(|mut e| {
            if !e.message.starts_with(func) {
                e.message = format!("{func}: {}", e.message);
            }
            e
        })
        .into()
    })
}
