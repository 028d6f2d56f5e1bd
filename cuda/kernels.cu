// The single translation unit compiled into the embedded fatbin (one module
// for cudarc to load). Each included file holds one algorithm.
#include "ntt.cu"
#include "batch_add.cu"
#include "msm.cu"
#include "subgroup.cu"
