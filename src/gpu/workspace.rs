//! A step's device scratch buffers, listed once. A step builds its buffers
//! through an [`Arena`]: [`Sizing`] adds up their bytes (what admission
//! reserves for the step, [`bytes_of`]) and [`OnDevice`] allocates them on a
//! call's stream, from the same code, so the byte formula and the
//! allocations cannot drift apart. A buffer type is generic over the arena's
//! [`Mem`]: [`Dev`] (device buffers, the default) or [`Count`] (nothing held).

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};

use super::exec::Exec;
use crate::error::Result;

/// What a step's buffers are made of: device buffers, or nothing (sizing).
pub trait Mem {
    type Buf<T: DeviceRepr + ValidAsZeroBits>;
}

/// Device buffers.
pub struct Dev;
impl Mem for Dev {
    type Buf<T: DeviceRepr + ValidAsZeroBits> = CudaSlice<T>;
}

/// No buffers: the step is only sized.
pub struct Count;
impl Mem for Count {
    type Buf<T: DeviceRepr + ValidAsZeroBits> = ();
}

/// Makes a step's zeroed buffers of `len` elements.
pub trait Arena {
    type M: Mem;
    fn zeros<T: DeviceRepr + ValidAsZeroBits>(&mut self, len: usize, what: &str) -> Result<<Self::M as Mem>::Buf<T>>;
}

/// Adds up the bytes of the buffers a step would allocate.
#[derive(Default)]
pub struct Sizing {
    pub bytes: usize,
}

impl Arena for Sizing {
    type M = Count;
    fn zeros<T: DeviceRepr + ValidAsZeroBits>(&mut self, len: usize, _what: &str) -> Result<()> {
        // As Exec::zeros: at least one element.
        self.bytes += len.max(1) * std::mem::size_of::<T>();
        Ok(())
    }
}

/// Allocates on a call's device ([`Exec::zeros`]).
pub struct OnDevice<'a>(pub &'a Exec);

impl Arena for OnDevice<'_> {
    type M = Dev;
    fn zeros<T: DeviceRepr + ValidAsZeroBits>(&mut self, len: usize, what: &str) -> Result<CudaSlice<T>> {
        self.0.zeros::<T>(len, what)
    }
}

/// The device bytes of the buffers `build` makes.
pub fn bytes_of<W>(build: impl FnOnce(&mut Sizing) -> Result<W>) -> usize {
    let mut sizing = Sizing::default();
    build(&mut sizing).expect("sizing allocates nothing and cannot fail");
    sizing.bytes
}
