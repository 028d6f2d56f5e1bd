//! The kernels of cuda/kernels.cu, each named once: [`Kernel`] is what the
//! Rust side launches, and its [`Kernel::name`] is the `extern "C"` symbol
//! the module is asked for when the device is opened.

/// log2 of the elements one `fr_ntt_pass` block holds (NTT_TILE_LG in cuda/ntt.cu).
pub const NTT_TILE_LG: u32 = 10;

/// The most dynamic shared memory any `fr_ntt_pass` launch asks for (its
/// tile, twiddles and column factors at 32 B per scalar; `gpu::ntt` sizes
/// each pass within it): set as the kernel's limit when the module loads.
pub const NTT_MAX_SHARED_BYTES: u32 = 32 * ((2 << NTT_TILE_LG) + NTT_TILE_LG * 4);

/// One kernel of the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    FrPowers,
    FrMulPowersTab,
    FrBitReverse,
    FrNttPass,
    FrQuotientPointwise,
    FrFromMontgomery,
    G1BatchAdd,
    G2BatchAdd,
    G1ReduceGroups,
    G2ReduceGroups,
    MsmHistogram,
    MsmScan,
    MsmScatter,
    MsmAccumulateG1,
    MsmAccumulateG2,
    MsmMergePartialsG1,
    MsmMergePartialsG2,
    MsmFixupG1,
    MsmFixupG2,
    MsmBucketSegmentsG1,
    MsmBucketSegmentsG2,
    SubgroupBucketKeys,
    BucketHistogram,
    BucketScatter,
    G1AddTables,
    G2AddTables,
}

impl Kernel {
    /// Every kernel, in the order [`Kernel::index`] numbers them.
    pub const ALL: [Kernel; 26] = [
        Kernel::FrPowers,
        Kernel::FrMulPowersTab,
        Kernel::FrBitReverse,
        Kernel::FrNttPass,
        Kernel::FrQuotientPointwise,
        Kernel::FrFromMontgomery,
        Kernel::G1BatchAdd,
        Kernel::G2BatchAdd,
        Kernel::G1ReduceGroups,
        Kernel::G2ReduceGroups,
        Kernel::MsmHistogram,
        Kernel::MsmScan,
        Kernel::MsmScatter,
        Kernel::MsmAccumulateG1,
        Kernel::MsmAccumulateG2,
        Kernel::MsmMergePartialsG1,
        Kernel::MsmMergePartialsG2,
        Kernel::MsmFixupG1,
        Kernel::MsmFixupG2,
        Kernel::MsmBucketSegmentsG1,
        Kernel::MsmBucketSegmentsG2,
        Kernel::SubgroupBucketKeys,
        Kernel::BucketHistogram,
        Kernel::BucketScatter,
        Kernel::G1AddTables,
        Kernel::G2AddTables,
    ];

    /// The kernel's symbol in the module.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::FrPowers => "fr_powers",
            Kernel::FrMulPowersTab => "fr_mul_powers_tab",
            Kernel::FrBitReverse => "fr_bit_reverse",
            Kernel::FrNttPass => "fr_ntt_pass",
            Kernel::FrQuotientPointwise => "fr_quotient_pointwise",
            Kernel::FrFromMontgomery => "fr_from_montgomery",
            Kernel::G1BatchAdd => "g1_batch_add",
            Kernel::G2BatchAdd => "g2_batch_add",
            Kernel::G1ReduceGroups => "g1_reduce_groups",
            Kernel::G2ReduceGroups => "g2_reduce_groups",
            Kernel::MsmHistogram => "msm_histogram",
            Kernel::MsmScan => "msm_scan",
            Kernel::MsmScatter => "msm_scatter",
            Kernel::MsmAccumulateG1 => "msm_accumulate_g1",
            Kernel::MsmAccumulateG2 => "msm_accumulate_g2",
            Kernel::MsmMergePartialsG1 => "msm_merge_partials_g1",
            Kernel::MsmMergePartialsG2 => "msm_merge_partials_g2",
            Kernel::MsmFixupG1 => "msm_fixup_g1",
            Kernel::MsmFixupG2 => "msm_fixup_g2",
            Kernel::MsmBucketSegmentsG1 => "msm_bucket_segments_g1",
            Kernel::MsmBucketSegmentsG2 => "msm_bucket_segments_g2",
            Kernel::SubgroupBucketKeys => "subgroup_bucket_keys",
            Kernel::BucketHistogram => "bucket_histogram",
            Kernel::BucketScatter => "bucket_scatter",
            Kernel::G1AddTables => "g1_add_tables",
            Kernel::G2AddTables => "g2_add_tables",
        }
    }

    /// Its position in [`Kernel::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::Kernel;

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
