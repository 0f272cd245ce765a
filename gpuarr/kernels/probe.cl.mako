## The device probe's kernels (gpuarr/probe_run.py runs them in a subprocess): one of each
## construct gpuarr's kernels rely on, so that a driver that cannot compile or run one fails
## there, in a process of its own, and not in the user's.
## Inputs: fp64 (the device has cl_khr_fp64: probe_fma64 is defined); local_size (the
##   work-group size probe_local runs with, a power of two).
## Defines (global size n, one work-item per i):
##   probe_fma(x, y)       y[16i..16i+15] = fma(v, v, v) of float16 vectors, the shape CPU
##                         compilers give gemm_direct's micro-kernel (the fma PoCL 3.0 could
##                         not select on AMD Zen 4); y[16n + i] = fma(x[16n + i], 2, 1)
##   probe_fma64(x, y)     y[8i..8i+7] = fma(v, v, v) of double8 vectors
##   probe_half(h, y, o)   y[i] = vload_half(i) + the sum of vload_half4(i / 4);
##                         o[i] = vstore_half_rte(2 * h[i]): float16 as cltypes reads/writes it
##   probe_atomics(c, w)   atomic_inc(c[0]) by each work-item, atomic_cmpxchg(c[1], 0, 7) by
##                         one, c[2] += each group's local atomic_add of its ids, bit i % 32
##                         of w[(i / 32) % 2] set with atomic_or
##   probe_local(x, y)     y[group] = the group's sum of x, a tree in local memory with barriers
% if fp64:
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif

__kernel void probe_fma(__global const float *x, __global float *y)
{
    const int i = get_global_id(0);
    const float16 v = vload16(i, x);
    vstore16(fma(v, v, v), i, y);
    const float s = x[16 * get_global_size(0) + i];
    y[16 * get_global_size(0) + i] = fma(s, 2.0f, 1.0f);
}

% if fp64:
__kernel void probe_fma64(__global const double *x, __global double *y)
{
    const int i = get_global_id(0);
    const double8 v = vload8(i, x);
    vstore8(fma(v, v, v), i, y);
}
% endif

__kernel void probe_half(__global const half *h, __global float *y, __global half *o)
{
    const int i = get_global_id(0);
    const float4 q = vload_half4(i / 4, h);
    const float v = vload_half(i, h) + (q.x + q.y + q.z + q.w);
    y[i] = v;
    vstore_half_rte(2.0f * vload_half(i, h), i, o);
}

__kernel void probe_atomics(__global uint *counters, __global uint *words)
{
    __local uint group_sum;
    const uint i = get_global_id(0);
    if (get_local_id(0) == 0)
        group_sum = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&group_sum, i);
    atomic_inc(&counters[0]);
    atomic_or(&words[(i / 32) % 2], 1u << (i % 32));
    if (i == 0)
        atomic_cmpxchg((volatile __global int *)&counters[1], 0, 7);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atomic_add(&counters[2], group_sum);
}

__kernel void probe_local(__global const float *x, __global float *y)
{
    __local float part[${local_size}];
    const int l = get_local_id(0);
    part[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in [local_size >> k for k in range(1, local_size.bit_length())]:
    if (l < ${s})
        part[l] += part[l + ${s}];
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
    if (l == 0)
        y[get_group_id(0)] = part[0];
}
