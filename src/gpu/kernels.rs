//! The kernels of cuda/kernels.cu, each declared once: [`Kernel`] names the
//! `extern "C"` symbol the module is asked for when the device is opened, and
//! [`launch`] has one typed function per kernel that pushes its arguments in
//! the kernel's order. A test checks every declaration against the kernel's
//! parameter list in cuda/ (names, order, `const` or not, element types), so
//! a launch cannot pass a wrong argument count, a value or buffer of the
//! wrong type, nor hand a buffer the kernel writes to cudarc as one it only
//! reads. Two arguments of one type swapped at a call site still compile:
//! the launch functions' parameter names are the kernels', for the reader.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchArgs, LaunchConfig, PushKernelArg};

use super::device::cuda_err;
use super::exec::Exec;
use super::group::DeviceGroup;
use crate::curve::GroupName;
use crate::error::Result;

/// log2 of the elements one NTT pass block holds, in every radix's kernel
/// (NTT_TILE_LG in cuda/ntt.cu).
pub const NTT_TILE_LG: u32 = 10;

/// The most dynamic shared memory any NTT pass launch asks for, of any
/// radix or direction (its tile, twiddles and column factors at 32 B per
/// scalar; `gpu::ntt` sizes each pass within it, a test checks every
/// pass): set as the limit of [`NTT_PASS_KERNELS`] when the module loads.
pub const NTT_MAX_SHARED_BYTES: u32 = 32 * ((2 << NTT_TILE_LG) + NTT_TILE_LG * 4);

/// The NTT pass kernels, every radix and direction: they keep their tile and
/// twiddles in dynamic shared memory, past the 48 KiB a launch gets without
/// asking, so the module load raises their limit to [`NTT_MAX_SHARED_BYTES`].
pub const NTT_PASS_KERNELS: [Kernel; 6] =
    [Kernel::FrNttPass, Kernel::FrNttPassDif, Kernel::FrNttPassR4, Kernel::FrNttPassDifR4, Kernel::FrNttPassR8, Kernel::FrNttPassDifR8];

/// A device buffer of `T` that a kernel only reads (a `const T*`
/// parameter): cudarc orders the launch after the buffer's last write.
pub trait Src<T> {
    fn push<'a>(&'a self, l: &mut LaunchArgs<'a>);
}

/// A device buffer of `T` that a kernel writes (a `T*` parameter): cudarc
/// orders the launch after the buffer's last read and write, and later
/// readers after the launch.
pub trait Dst<T> {
    fn push<'a>(&'a mut self, l: &mut LaunchArgs<'a>);
}

impl<T> Src<T> for CudaSlice<T> {
    fn push<'a>(&'a self, l: &mut LaunchArgs<'a>) {
        l.arg(self);
    }
}

impl<T> Src<T> for CudaView<'_, T> {
    fn push<'a>(&'a self, l: &mut LaunchArgs<'a>) {
        l.arg(self);
    }
}

impl<T> Dst<T> for CudaSlice<T> {
    fn push<'a>(&'a mut self, l: &mut LaunchArgs<'a>) {
        l.arg(self);
    }
}

impl<T> Dst<T> for CudaViewMut<'_, T> {
    fn push<'a>(&'a mut self, l: &mut LaunchArgs<'a>) {
        l.arg(self);
    }
}

/// One parameter of a kernel as the table declares it: its name, how the
/// kernel uses it (`src`: `const T*`, `dst`: `T*`, `val`: passed by value)
/// and its Rust element or value type (for the tests against cuda/).
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub mode: &'static str,
    pub ty: &'static str,
}

// The Rust type of a parameter of the table.
macro_rules! arg_ty {
    (src $t:ident) => { &impl Src<$t> };
    (dst $t:ident) => { &mut impl Dst<$t> };
    (val $t:ident) => { $t };
}

// Pushes one parameter onto a launch.
macro_rules! push_arg {
    ($l:ident, src, $p:ident) => { Src::push($p, &mut $l) };
    ($l:ident, dst, $p:ident) => { Dst::push($p, &mut $l) };
    ($l:ident, val, $p:ident) => { $l.arg(&$p) };
}

/// The kernel table: one entry per kernel,
/// `Variant = fn symbol(param: mode Type, …);` in the order
/// [`Kernel::index`] numbers them; then, after `;`, one entry per kernel
/// instantiated for both groups (a template over the point types in cuda/,
/// one `extern "C"` wrapper per group), `Name(VariantG1 = "symbol_g1",
/// VariantG2 = "symbol_g2") = fn launch_name(…);`, which [`PointKernel`]
/// names for either group ([`DeviceGroup::kernel`]). A mode is `src` (a
/// buffer the kernel reads), `dst` (one it writes) or `val` (a value); a
/// point or scalar buffer is one of u64 words. Adding a kernel is one entry
/// here and its `extern "C"` definition under cuda/ (the tests below check
/// one against the other).
macro_rules! kernels {
    (
        $($variant:ident = fn $name:ident($($p:ident: $mode:ident $t:ident),* $(,)?);)*
        ;
        $($point:ident($g1:ident = $g1_name:literal, $g2:ident = $g2_name:literal) = fn $pname:ident($($pp:ident: $pmode:ident $pt:ident),* $(,)?);)*
    ) => {
        /// One kernel of the module.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kernel {
            $($variant,)*
            $($g1, $g2,)*
        }

        impl Kernel {
            /// Every kernel, in the order [`Kernel::index`] numbers them.
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant,)* $(Kernel::$g1, Kernel::$g2,)*];

            /// The kernel's symbol in the module.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Kernel::$variant => stringify!($name),)*
                    $(Kernel::$g1 => $g1_name, Kernel::$g2 => $g2_name,)*
                }
            }

            /// Its position in [`Kernel::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }

            /// Its parameters as the table declares them (what its typed
            /// launch in [`launch`] takes after the stream and the shape).
            #[cfg(test)]
            pub const fn params(self) -> &'static [Param] {
                match self {
                    $(Kernel::$variant => &[$(Param { name: stringify!($p), mode: stringify!($mode), ty: stringify!($t) },)*],)*
                    $(Kernel::$g1 | Kernel::$g2 => &[$(Param { name: stringify!($pp), mode: stringify!($pmode), ty: stringify!($pt) },)*],)*
                }
            }
        }

        /// A kernel instantiated for G1 and for G2.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum PointKernel {
            $($point,)*
        }

        impl PointKernel {
            /// Every per-group kernel.
            #[cfg(test)]
            pub const ALL: &'static [PointKernel] = &[$(PointKernel::$point,)*];

            /// Its instance for `group`.
            pub const fn of(self, group: GroupName) -> Kernel {
                match (self, group) {
                    $((PointKernel::$point, GroupName::G1) => Kernel::$g1, (PointKernel::$point, GroupName::G2) => Kernel::$g2,)*
                }
            }
        }

        /// One function per kernel of the table: it launches the kernel on
        /// `exec`'s stream in the shape `cfg`, with the kernel's parameters
        /// in its order and of its types (a per-group kernel takes the group
        /// as `G`).
        ///
        /// # Safety
        /// Every launch: the buffers hold what the kernel reads and writes
        /// for these values under `cfg` (each call site says why), and `cfg`
        /// is a shape the kernel runs in (its block size, shared memory).
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub mod launch {
            use super::*;

            $(
                #[doc = concat!("Launches `", stringify!($name), "`; see the [module](self)'s safety contract.")]
                pub unsafe fn $name(exec: &Exec, cfg: LaunchConfig, $($p: arg_ty!($mode $t)),*) -> Result<()> {
                    let k = Kernel::$variant;
                    let mut l = exec.stream.launch_builder(exec.kernel(k));
                    $(push_arg!(l, $mode, $p);)*
                    // SAFETY: the arguments are the kernel's parameters (the table's test);
                    // the caller's contract covers the bounds and the shape.
                    unsafe { l.launch(cfg) }.map(drop).map_err(cuda_err(k.name()))
                }
            )*
            $(
                #[doc = concat!("Launches `", $g1_name, "` or `", $g2_name, "` for `G`; see the [module](self)'s safety contract.")]
                pub unsafe fn $pname<G: DeviceGroup>(exec: &Exec, cfg: LaunchConfig, $($pp: arg_ty!($pmode $pt)),*) -> Result<()> {
                    let k = G::kernel(PointKernel::$point);
                    let mut l = exec.stream.launch_builder(exec.kernel(k));
                    $(push_arg!(l, $pmode, $pp);)*
                    // SAFETY: as above.
                    unsafe { l.launch(cfg) }.map(drop).map_err(cuda_err(k.name()))
                }
            )*
        }
    };
}

kernels! {
    FrPowers = fn fr_powers(out: dst u64, consts: src u64, n: val usize);
    FrMulPowersTab = fn fr_mul_powers_tab(data: dst u64, lo: src u64, hi: src u64, lg_lo: val u32, n: val usize);
    FrBitReverse = fn fr_bit_reverse(data: dst u64, lg_n: val u32);
    FrNttPass = fn fr_ntt_pass(data: dst u64, roots: src u64, lo: src u64, hi: src u64, lg_lo: val u32, lg_n: val u32, s0: val u32, k: val u32, lg_t: val u32);
    FrNttPassDif = fn fr_ntt_pass_dif(data: dst u64, roots: src u64, lo: src u64, hi: src u64, lg_lo: val u32, lg_n: val u32, s0: val u32, k: val u32, lg_t: val u32,
        slo: src u64, shi: src u64, lg_slo: val u32, scale: val u32);
    FrNttPassR4 = fn fr_ntt_pass_r4(data: dst u64, roots: src u64, lo: src u64, hi: src u64, lg_lo: val u32, lg_n: val u32, s0: val u32, k: val u32, lg_t: val u32);
    FrNttPassDifR4 = fn fr_ntt_pass_dif_r4(data: dst u64, roots: src u64, lo: src u64, hi: src u64, lg_lo: val u32, lg_n: val u32, s0: val u32, k: val u32, lg_t: val u32,
        slo: src u64, shi: src u64, lg_slo: val u32, scale: val u32);
    FrNttPassR8 = fn fr_ntt_pass_r8(data: dst u64, roots: src u64, lo: src u64, hi: src u64, lg_lo: val u32, lg_n: val u32, s0: val u32, k: val u32, lg_t: val u32);
    FrNttPassDifR8 = fn fr_ntt_pass_dif_r8(data: dst u64, roots: src u64, lo: src u64, hi: src u64, lg_lo: val u32, lg_n: val u32, s0: val u32, k: val u32, lg_t: val u32,
        slo: src u64, shi: src u64, lg_slo: val u32, scale: val u32);
    FrQuotientPointwise = fn fr_quotient_pointwise(a: dst u64, b: src u64, c: src u64, consts: src u64, n: val usize);
    MsmRecode = fn msm_recode(scalars: dst u64, n: val usize, c: val u32);
    MsmHistogram = fn msm_histogram(scalars: src u64, n: val usize, c: val u32, nb: val u32, counts: dst u32);
    MsmScanTiles = fn msm_scan_tiles(counts: src u32, starts: dst u32, nb: val u32, tile_sums: dst u32, tile_max: dst u32);
    MsmScanTotals = fn msm_scan_totals(tile_sums: dst u32, tile_max: src u32, tiles: val u32, starts: dst u32, nb: val u32, big_points: val u32, big: dst u32);
    MsmScanOffsets = fn msm_scan_offsets(starts: dst u32, cursors: dst u32, nb: val u32, tile_sums: src u32);
    MsmScatter = fn msm_scatter(scalars: src u64, n: val usize, c: val u32, window: val u32, cursors: dst u32, K: val u32, idx: dst u32, thread_keys: dst u32);
    GatherPoints = fn gather_points(src: src u64, pos: src u32, n: val usize, words: val u32, dst: dst u64);
    SubgroupBucketKeys = fn subgroup_bucket_keys(key: src u32, stream: val u64, first: val usize, n: val usize, buckets: val u32, out: dst u32);
    BucketHistogram = fn bucket_histogram(keys: src u32, n: val usize, counts: dst u32);
    BucketScatter = fn bucket_scatter(keys: src u32, n: val usize, cursors: dst u32, K: val u32, idx: dst u32, thread_keys: dst u32);
    ;
    BatchAdd(G1BatchAdd = "g1_batch_add", G2BatchAdd = "g2_batch_add") = fn batch_add(
        bases: src u64, bitmaps: src u64, words: val usize, first_word: val usize, n: val usize, chunk: val usize,
        circuits: val usize, slots: val usize, add: val u32, partials: dst u64);
    ReduceGroups(G1ReduceGroups = "g1_reduce_groups", G2ReduceGroups = "g2_reduce_groups") = fn reduce_groups(
        input: src u64, per_group: val usize, out: dst u64);
    MsmAccumulate(MsmAccumulateG1 = "msm_accumulate_g1", MsmAccumulateG2 = "msm_accumulate_g2") = fn msm_accumulate(
        bases: src u64, idx: src u32, thread_keys: src u32, starts: src u32, nb: val u32, K: val u32, threads: val usize,
        buckets: dst u64, heads: dst u64, head_keys: dst u32, tails: dst u64, tail_keys: dst u32);
    MsmMergePartials(MsmMergePartialsG1 = "msm_merge_partials_g1", MsmMergePartialsG2 = "msm_merge_partials_g2") = fn msm_merge_partials(
        heads: src u64, head_keys: src u32, tails: src u64, tail_keys: src u32, entries: val usize, K: val u32, threads: val usize,
        buckets: dst u64, heads_out: dst u64, head_keys_out: dst u32, tails_out: dst u64, tail_keys_out: dst u32, big: src u32);
    MsmFixup(MsmFixupG1 = "msm_fixup_g1", MsmFixupG2 = "msm_fixup_g2") = fn msm_fixup(
        buckets: dst u64, nb: val u32, starts: src u32, K: val u32, heads0: src u64, head_keys0: src u32, tails0: src u64,
        tail_keys0: src u32, heads: src u64, head_keys: src u32, tails: src u64, tail_keys: src u32, entries: val usize, big: src u32);
    MsmBucketSegments(MsmBucketSegmentsG1 = "msm_bucket_segments_g1", MsmBucketSegmentsG2 = "msm_bucket_segments_g2") = fn msm_bucket_segments(
        buckets: src u64, nb: val u32, L: val u32, segments: val u32, windows: val u32, out: dst u64);
    AddTables(G1AddTables = "g1_add_tables", G2AddTables = "g2_add_tables") = fn add_tables(
        total: dst u64, part: src u64, n: val usize);
}

#[cfg(test)]
mod tests {
    use super::{Kernel, Param, PointKernel};

    /// The text of cuda/*.cu, the `\` line ends of msm.cu's macros removed.
    fn cuda_sources() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda");
        let mut texts = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "cu") {
                texts.push(std::fs::read_to_string(&path).unwrap().replace("\\\n", " "));
            }
        }
        texts
    }

    /// The `extern "C" __global__` kernels that cuda/*.cu defines, with the
    /// `##G` macros of msm.cu expanded for g1 and g2, and ntt.cu's
    /// `##SUFFIX` macro for each suffix it is instantiated with
    /// (`NTT_PASS_KERNELS(_r4, 2)`, the suffix checked against the radix):
    /// (symbol, parameter list).
    fn defined_in_cuda() -> Vec<(String, String)> {
        let mut kernels = Vec::new();
        for text in cuda_sources() {
            // Each instantiation's suffix names its radix: `_r4` for RADIX_LG 2,
            // none for radix 2 (the kernels' launches pick them by name).
            let suffixes: Vec<String> = text
                .split("\nNTT_PASS_KERNELS(")
                .skip(1)
                .map(|rest| {
                    let (args, _) = rest.split_once(')').expect("NTT_PASS_KERNELS(suffix, radix_lg)");
                    let (suffix, radix_lg) = args.split_once(',').expect("NTT_PASS_KERNELS(suffix, radix_lg)");
                    let radix_lg: u32 = radix_lg.trim().parse().expect("NTT_PASS_KERNELS: a number as radix_lg");
                    let want = if radix_lg == 1 { String::new() } else { format!("_r{}", 1u32 << radix_lg) };
                    assert_eq!(suffix.trim(), want, "NTT_PASS_KERNELS({args}): the suffix of radix 2^{radix_lg}");
                    want
                })
                .collect();
            for def in text.split("extern \"C\" __global__ void ").skip(1) {
                // An optional `__launch_bounds__(N) ` before the name.
                let def = def.strip_prefix("__launch_bounds__(").and_then(|d| d.split_once(") ")).map_or(def, |(_, rest)| rest);
                let name: String = def.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '#').collect();
                let params = def[name.len()..].trim_start().strip_prefix('(').and_then(|p| p.split_once(')')).map(|(p, _)| p.to_string());
                let params = params.unwrap_or_else(|| panic!("{name}: no parameter list"));
                if let Some(stem) = name.strip_suffix("_##G") {
                    kernels.extend(["g1", "g2"].map(|g| (format!("{stem}_{g}"), params.replace("G##_", &format!("{g}_")))));
                } else if let Some(stem) = name.strip_suffix("##SUFFIX") {
                    assert!(!suffixes.is_empty(), "{name}: a macro never instantiated");
                    kernels.extend(suffixes.iter().map(|s| (format!("{stem}{s}"), params.clone())));
                } else {
                    kernels.push((name, params));
                }
            }
        }
        kernels
    }

    /// One C parameter (`const T* name`, `T* name` or `T name`) as a table
    /// entry: pointers to scalars and points are buffers of u64 words.
    fn as_declared(c_param: &str) -> Param {
        let words: Vec<&str> = c_param.split_whitespace().collect();
        let (name, ty) = words.split_last().unwrap_or_else(|| panic!("empty parameter"));
        let is_const = ty.first() == Some(&"const");
        let ty: String = ty.iter().filter(|w| **w != "const").copied().collect::<Vec<_>>().join(" ");
        let (name, ty, pointer) = match (name.strip_prefix('*'), ty.strip_suffix('*')) {
            (Some(n), _) => (n, ty.clone(), true),
            (None, Some(t)) => (*name, t.trim().to_string(), true),
            (None, None) => (*name, ty.clone(), false),
        };
        let base = ty.trim_start_matches("g1_").trim_start_matches("g2_");
        let rust: &'static str = match (pointer, base) {
            (true, "uint32_t") => "u32",
            (true, "uint64_t" | "fr_t" | "affine_t" | "xyzz_t" | "jacobian_t") => "u64",
            (false, "size_t") => "usize",
            (false, "unsigned" | "uint32_t") => "u32",
            (false, "uint64_t") => "u64",
            _ => panic!("parameter `{c_param}`: no Rust type for `{ty}`"),
        };
        let mode = match (pointer, is_const) {
            (true, true) => "src",
            (true, false) => "dst",
            (false, _) => "val",
        };
        Param { name: Box::leak(name.to_string().into_boxed_str()), mode, ty: rust }
    }

    #[test]
    fn every_kernel_is_defined_in_the_cuda_sources_and_every_definition_is_in_the_table() {
        let mut defined: Vec<String> = defined_in_cuda().into_iter().map(|(name, _)| name).collect();
        defined.sort_unstable();
        let mut table: Vec<String> = Kernel::ALL.iter().map(|k| k.name().to_string()).collect();
        table.sort_unstable();
        assert_eq!(table, defined, "the kernel table against the extern \"C\" kernels of cuda/*.cu");
    }

    /// Each typed launch pushes the kernel's parameters: the same names in
    /// the same order, a `const` pointer as `src`, any other pointer as
    /// `dst`, and element and value types of the same width.
    #[test]
    fn every_launch_takes_its_kernels_parameters() {
        for (name, params) in defined_in_cuda() {
            let kernel = Kernel::ALL.iter().find(|k| k.name() == name).unwrap_or_else(|| panic!("{name} is not in the table"));
            let declared: Vec<Param> = params.split(',').map(|p| as_declared(p.trim())).collect();
            assert_eq!(kernel.params(), declared.as_slice(), "{name}: the table's parameters against cuda/");
        }
    }

    #[test]
    fn the_parameter_reading_sees_modes_and_types() {
        assert_eq!(as_declared("const g2_affine_t* bases"), Param { name: "bases", mode: "src", ty: "u64" });
        assert_eq!(as_declared("uint32_t *idx"), Param { name: "idx", mode: "dst", ty: "u32" });
        assert_eq!(as_declared("size_t n"), Param { name: "n", mode: "val", ty: "usize" });
        assert_eq!(as_declared("unsigned c"), Param { name: "c", mode: "val", ty: "u32" });
    }

    /// Each per-group kernel's instances are the G1 and G2 symbols of one
    /// name (`g1_x`/`g2_x` or `x_g1`/`x_g2`).
    #[test]
    fn point_kernels_name_one_kernel_per_group() {
        use crate::curve::GroupName;
        for &k in PointKernel::ALL {
            let (g1, g2) = (k.of(GroupName::G1).name(), k.of(GroupName::G2).name());
            assert_eq!(g1.replace("g1", "g2"), g2, "{k:?}");
            assert!(g1.starts_with("g1_") || g1.ends_with("_g1"), "{k:?}: {g1}");
        }
    }

    #[test]
    fn the_table_is_in_index_order_and_names_are_unique() {
        for (i, k) in Kernel::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{k:?}");
        }
        let mut names: Vec<_> = Kernel::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kernel::ALL.len());
    }

    /// The cubins of a fatbin as nvcc writes it: (SM version, ELF image) of
    /// every entry of kind 2. A fatbin is one or more containers (magic
    /// 0xBA55ED50, u16 header size at 6, u64 size of its entries at 8); an
    /// entry has its kind (u16) at 0, its header size (u32) at 4, its padded
    /// payload size (u64) at 8, its SM version (u32) at 0x1c and its flags
    /// (u64) at 0x28, where 0x2000 and 0x8000 mark a compressed payload.
    fn cubins(fatbin: &[u8]) -> Vec<(u32, &[u8])> {
        let u16_at = |at: usize| u16::from_le_bytes(fatbin[at..at + 2].try_into().unwrap()) as usize;
        let u32_at = |at: usize| u32::from_le_bytes(fatbin[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(fatbin[at..at + 8].try_into().unwrap()) as usize;
        let mut cubins = Vec::new();
        let mut container = 0;
        while container < fatbin.len() {
            assert_eq!(u32_at(container), 0xBA55_ED50, "no fatbin container at byte {container}");
            let first = container + u16_at(container + 6);
            let end = first + u64_at(container + 8);
            let mut entry = first;
            while entry < end {
                let (kind, header, payload) = (u16_at(entry), u32_at(entry + 4) as usize, u64_at(entry + 8));
                let (sm, flags) = (u32_at(entry + 0x1c), u64_at(entry + 0x28));
                if kind == 2 {
                    assert_eq!(flags & 0xA000, 0, "the sm_{sm} cubin is compressed (flags {flags:#x}): check NVCC_APPEND_FLAGS");
                    cubins.push((sm, &fatbin[entry + header..entry + header + payload]));
                }
                entry += header + payload;
            }
            container = end;
        }
        cubins
    }

    /// Every NTT pass kernel (`fr_ntt_pass*`) gets its shared-memory limit
    /// raised at the module load: one left out fails every launch of its
    /// radix on the device.
    #[test]
    fn every_ntt_pass_kernel_gets_its_shared_memory() {
        let mut passes: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).filter(|n| n.starts_with("fr_ntt_pass")).collect();
        let mut raised: Vec<&str> = super::NTT_PASS_KERNELS.iter().map(|k| k.name()).collect();
        passes.sort_unstable();
        raised.sort_unstable();
        assert_eq!(raised, passes);
    }

    /// Every kernel of the table is in the embedded fatbin's code, once per
    /// SASS architecture built: the sources' parser above cannot see a kernel
    /// the preprocessor hides (`#if 0`) or a per-group macro instantiated
    /// under another name, which would otherwise show only as a failed
    /// module load on a device.
    #[test]
    fn every_kernel_is_compiled_for_every_architecture() {
        let cubins = cubins(crate::gpu::device::FATBIN);
        let mut built: Vec<String> = cubins.iter().map(|(sm, _)| format!("sm_{sm}")).collect();
        built.sort_unstable();
        let mut wanted: Vec<&str> = env!("SUPRASEAL_C2_ARCHS").split(',').collect();
        wanted.sort_unstable();
        assert_eq!(built, wanted, "the fatbin's cubins against the architectures built");
        for (sm, elf) in cubins {
            assert_eq!(&elf[..4], b"\x7fELF", "sm_{sm}: not an ELF image");
            for k in Kernel::ALL {
                // A kernel's code is the section `.text.<symbol>`, named in the
                // cubin's table of NUL-terminated section names.
                let section = format!("\0.text.{}\0", k.name());
                assert!(elf.windows(section.len()).any(|w| w == section.as_bytes()), "{}: not in the sm_{sm} cubin", k.name());
            }
        }
    }

    #[test]
    fn the_fatbin_reading_finds_each_cubin_and_refuses_a_compressed_one() {
        // One container: a PTX entry, then two cubins.
        let entry = |kind: u16, sm: u32, flags: u64, payload: &[u8]| {
            let mut e = vec![0u8; 64];
            e[..2].copy_from_slice(&kind.to_le_bytes());
            e[4..8].copy_from_slice(&64u32.to_le_bytes());
            e[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
            e[0x1c..0x20].copy_from_slice(&sm.to_le_bytes());
            e[0x28..0x30].copy_from_slice(&flags.to_le_bytes());
            e.extend_from_slice(payload);
            e
        };
        let container = |entries: &[Vec<u8>]| {
            let body: Vec<u8> = entries.concat();
            let mut c = Vec::new();
            c.extend_from_slice(&0xBA55_ED50u32.to_le_bytes());
            c.extend_from_slice(&1u16.to_le_bytes());
            c.extend_from_slice(&16u16.to_le_bytes());
            c.extend_from_slice(&(body.len() as u64).to_le_bytes());
            c.extend_from_slice(&body);
            c
        };
        let fatbin = container(&[entry(1, 90, 0x8011, b"(zstd ptx)"), entry(2, 80, 0x11, b"\x7fELF a"), entry(2, 90, 0x11, b"\x7fELF b")]);
        let found: Vec<(u32, &[u8])> = cubins(&fatbin);
        assert_eq!(found, vec![(80, &b"\x7fELF a"[..]), (90, &b"\x7fELF b"[..])]);
        let compressed = container(&[entry(2, 90, 0x2011, b"\x7fELF c")]);
        assert!(std::panic::catch_unwind(|| cubins(&compressed)).is_err());
    }

    /// The value of `#define name value` in cuda/ (a number, or a product
    /// of earlier defines in parentheses).
    fn cuda_define(name: &str) -> u64 {
        let all: String = cuda_sources().concat();
        let line = all.lines().find_map(|l| l.trim().strip_prefix("#define ").and_then(|d| d.strip_prefix(name)).filter(|d| d.starts_with(' ')));
        let value = line.unwrap_or_else(|| panic!("no #define {name} in cuda/")).trim();
        let value = value.trim_start_matches('(').trim_end_matches(')');
        value.split('*').map(|f| f.trim()).map(|f| f.parse::<u64>().unwrap_or_else(|_| cuda_define(f))).product()
    }

    /// The constants the Rust side launches with, against the kernels'.
    #[test]
    fn launch_constants_match_the_kernels() {
        assert_eq!(u64::from(super::NTT_TILE_LG), cuda_define("NTT_TILE_LG"));
        for (name, rust) in crate::gpu::msm::MIRRORED_DEFINES {
            assert_eq!(u64::from(*rust), cuda_define(name), "{name}");
        }
    }
}
