//! The kernels of cuda/kernels.cu, each named once: [`Kernel`] is what the
//! Rust side launches, and its [`Kernel::name`] is the `extern "C"` symbol
//! the module is asked for when the device is opened.

use crate::curve::GroupName;

/// log2 of the elements one `fr_ntt_pass` block holds (NTT_TILE_LG in cuda/ntt.cu).
pub const NTT_TILE_LG: u32 = 10;

/// The most dynamic shared memory any `fr_ntt_pass` launch asks for (its
/// tile, twiddles and column factors at 32 B per scalar; `gpu::ntt` sizes
/// each pass within it): set as the kernel's limit when the module loads.
pub const NTT_MAX_SHARED_BYTES: u32 = 32 * ((2 << NTT_TILE_LG) + NTT_TILE_LG * 4);

/// The kernel table: one line per kernel, `Variant = "symbol"`, in the
/// order [`Kernel::index`] numbers them; then, after `;`, one line per
/// kernel instantiated for both groups, `Name(VariantG1 = "symbol_g1",
/// VariantG2 = "symbol_g2")`, which [`PointKernel`] names for either group
/// ([`DeviceGroup::kernel`](super::group::DeviceGroup::kernel)). Adding a
/// kernel is one line here (and its `extern "C"` definition under cuda/; the
/// test below checks that every symbol is defined there).
macro_rules! kernels {
    ($($variant:ident = $name:literal,)* ; $($point:ident($g1:ident = $g1_name:literal, $g2:ident = $g2_name:literal),)*) => {
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
                    $(Kernel::$variant => $name,)*
                    $(Kernel::$g1 => $g1_name, Kernel::$g2 => $g2_name,)*
                }
            }

            /// Its position in [`Kernel::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        /// A kernel instantiated for G1 and for G2 (a template over the
        /// point types in cuda/, one `extern "C"` wrapper per group).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum PointKernel {
            $($point,)*
        }

        impl PointKernel {
            /// Every per-group kernel.
            pub const ALL: &'static [PointKernel] = &[$(PointKernel::$point,)*];

            /// Its instance for `group`.
            pub const fn of(self, group: GroupName) -> Kernel {
                match (self, group) {
                    $((PointKernel::$point, GroupName::G1) => Kernel::$g1, (PointKernel::$point, GroupName::G2) => Kernel::$g2,)*
                }
            }
        }
    };
}

kernels! {
    FrPowers = "fr_powers",
    FrMulPowersTab = "fr_mul_powers_tab",
    FrBitReverse = "fr_bit_reverse",
    FrNttPass = "fr_ntt_pass",
    FrQuotientPointwise = "fr_quotient_pointwise",
    MsmRecode = "msm_recode",
    MsmHistogram = "msm_histogram",
    MsmScanTiles = "msm_scan_tiles",
    MsmScanTotals = "msm_scan_totals",
    MsmScanOffsets = "msm_scan_offsets",
    MsmScatter = "msm_scatter",
    GatherPoints = "gather_points",
    SubgroupBucketKeys = "subgroup_bucket_keys",
    BucketHistogram = "bucket_histogram",
    BucketScatter = "bucket_scatter",
    ;
    BatchAdd(G1BatchAdd = "g1_batch_add", G2BatchAdd = "g2_batch_add"),
    ReduceGroups(G1ReduceGroups = "g1_reduce_groups", G2ReduceGroups = "g2_reduce_groups"),
    MsmAccumulate(MsmAccumulateG1 = "msm_accumulate_g1", MsmAccumulateG2 = "msm_accumulate_g2"),
    MsmMergePartials(MsmMergePartialsG1 = "msm_merge_partials_g1", MsmMergePartialsG2 = "msm_merge_partials_g2"),
    MsmFixup(MsmFixupG1 = "msm_fixup_g1", MsmFixupG2 = "msm_fixup_g2"),
    MsmBucketSegments(MsmBucketSegmentsG1 = "msm_bucket_segments_g1", MsmBucketSegmentsG2 = "msm_bucket_segments_g2"),
    AddTables(G1AddTables = "g1_add_tables", G2AddTables = "g2_add_tables"),
}

#[cfg(test)]
mod tests {
    use super::Kernel;

    /// The `extern "C" __global__` kernels that cuda/*.cu defines, with the
    /// `##G` macros of msm.cu expanded for g1 and g2.
    fn defined_in_cuda() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "cu") {
                let text = std::fs::read_to_string(&path).unwrap();
                for def in text.split("extern \"C\" __global__ void ").skip(1) {
                    // An optional `__launch_bounds__(N) ` before the name.
                    let def = def.strip_prefix("__launch_bounds__(").and_then(|d| d.split_once(") ")).map_or(def, |(_, rest)| rest);
                    let name: String = def.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '#').collect();
                    match name.strip_suffix("_##G") {
                        Some(stem) => names.extend(["g1", "g2"].map(|g| format!("{stem}_{g}"))),
                        None => names.push(name),
                    }
                }
            }
        }
        names
    }

    #[test]
    fn every_kernel_is_defined_in_the_cuda_sources_and_every_definition_is_in_the_table() {
        let mut defined = defined_in_cuda();
        defined.sort_unstable();
        let mut table: Vec<String> = Kernel::ALL.iter().map(|k| k.name().to_string()).collect();
        table.sort_unstable();
        assert_eq!(table, defined, "the kernel table against the extern \"C\" kernels of cuda/*.cu");
    }

    /// Each per-group kernel's instances are the G1 and G2 symbols of one
    /// name (`g1_x`/`g2_x` or `x_g1`/`x_g2`).
    #[test]
    fn point_kernels_name_one_kernel_per_group() {
        use super::PointKernel;
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
}
