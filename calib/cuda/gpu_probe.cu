/*
 * gpu_probe.cu — lists the visible CUDA GPUs, for calib/cuda/run.sh.
 *
 * Prints one line per device: index, name, compute capability, SM count, memory (GiB), then
 * the driver / runtime CUDA versions. Exit status 0 when at least one GPU is visible, 2 when
 * none is (or the driver cannot be loaded).
 */
#include "common.h"

int main(void)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        fprintf(stderr, "gpu_probe: no CUDA GPU visible (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        cal_driver_hint(err);
        return 2;
    }
    for (int d = 0; d < n; d++) {
        cudaDeviceProp p;
        CK(cudaGetDeviceProperties(&p, d));
        printf("%d\t%s\tsm_%d%d\t%d SMs\t%.1f GiB\n", d, p.name, p.major, p.minor,
               p.multiProcessorCount, (double)p.totalGlobalMem / (1u << 30));
    }
    int dv = 0, rv = 0;
    CK(cudaDriverGetVersion(&dv));
    CK(cudaRuntimeGetVersion(&rv));
    printf("driver CUDA %d.%d, runtime CUDA %d.%d\n", dv / 1000, (dv % 1000) / 10, rv / 1000,
           (rv % 1000) / 10);
    return 0;
}
