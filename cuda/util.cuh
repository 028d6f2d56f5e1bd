// Small device helpers shared by every kernel file: thread indexing.
#pragma once

#include <cstddef>

__device__ __forceinline__ size_t global_tid() {
    return (size_t)blockIdx.x * blockDim.x + threadIdx.x;
}
