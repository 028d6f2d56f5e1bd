//! The kernels of cuda/kernels.cu, each named once: [`Kernel`] is what the
//! Rust side launches, and its [`Kernel::name`] is the `extern "C"` symbol
//! the module is asked for when the device is opened.

/// log2 of the elements one `fr_ntt_pass` block holds (NTT_TILE_LG in cuda/ntt.cu).
pub const NTT_TILE_LG: u32 = 10;

/// The most dynamic shared memory any `fr_ntt_pass` launch asks for (its
/// tile, twiddles and column factors at 32 B per scalar; `gpu::ntt` sizes
/// each pass within it): set as the kernel's limit when the module loads.
pub const NTT_MAX_SHARED_BYTES: u32 = 32 * ((2 << NTT_TILE_LG) + NTT_TILE_LG * 4);

/// The kernel table: one line per kernel, `Variant = "symbol"`, in the
/// order [`Kernel::index`] numbers them. Adding a kernel is one line here
/// (and its `extern "C"` definition under cuda/; the test below checks that
/// every symbol is defined there).
macro_rules! kernels {
    ($($variant:ident = $name:literal,)*) => {
        /// One kernel of the module.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kernel {
            $($variant,)*
        }

        impl Kernel {
            /// Every kernel, in the order [`Kernel::index`] numbers them.
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant,)*];

            /// The kernel's symbol in the module.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Kernel::$variant => $name,)*
                }
            }

            /// Its position in [`Kernel::ALL`].
            pub const fn index(self) -> usize {
                self as usize
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
    G1BatchAdd = "g1_batch_add",
    G2BatchAdd = "g2_batch_add",
    G1ReduceGroups = "g1_reduce_groups",
    G2ReduceGroups = "g2_reduce_groups",
    MsmRecode = "msm_recode",
    MsmHistogram = "msm_histogram",
    MsmScanTiles = "msm_scan_tiles",
    MsmScanTotals = "msm_scan_totals",
    MsmScanOffsets = "msm_scan_offsets",
    MsmScatter = "msm_scatter",
    MsmAccumulateG1 = "msm_accumulate_g1",
    MsmAccumulateG2 = "msm_accumulate_g2",
    MsmMergePartialsG1 = "msm_merge_partials_g1",
    MsmMergePartialsG2 = "msm_merge_partials_g2",
    MsmFixupG1 = "msm_fixup_g1",
    MsmFixupG2 = "msm_fixup_g2",
    MsmBucketSegmentsG1 = "msm_bucket_segments_g1",
    MsmBucketSegmentsG2 = "msm_bucket_segments_g2",
    GatherPoints = "gather_points",
    SubgroupBucketKeys = "subgroup_bucket_keys",
    BucketHistogram = "bucket_histogram",
    BucketScatter = "bucket_scatter",
    G1AddTables = "g1_add_tables",
    G2AddTables = "g2_add_tables",
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
