## One reduction kernel: out[o] = reduce over k of map(in[o, k]), deterministic.
## Inputs:
##   name        kernel name
##   in_dtype    storage dtype of the input; acc_dtype the accumulator's; out_dtype the output's
##   map_expr    OpenCL expression of the loaded value `v` (in in_dtype's compute type),
##               of dtype map_dtype, converted to the accumulator
##   reduce_expr OpenCL expression combining accumulators `a` and `b`
##   neutral     OpenCL expression of the neutral element
##   kdim        collapsed kept (output) dimensions, 0 for a single output
##   rdim        collapsed reduced dimensions (>= 1)
##   group       True: a work-group per output, its work-items striding over the reduced
##               elements, then a tree in local memory (reduced axis inner: coalesced);
##               False: a work-item per output walking the reduced elements (reduced axis
##               outer: neighbouring work-items read neighbouring addresses)
##   local_size  the work-group size (a power of two) when group is True
##   guarded     False when the work-items are exactly the outputs (PoCL then vectorises
##               across them)
##   index_t     'int' or 'long'
##   arg         None, or 'max'/'min': track the index of the extremum (argmax/argmin) and
##               store it (int64) instead of the value
## Arguments: ga_m (outputs), ga_n (reduced elements per output), ga_chunk (reduced elements
## per work-group: ga_n, or a slice of it for the first stage of a full reduction),
## [ga_kdims, ga_rdims], in pointer + offset + [kept strides, reduced strides], out pointer +
## offset + [kept strides].
## Defines: __kernel void ${name}(...)
<%! import gpuarr.kernels.cltypes as t %>\
${t.fp64_pragma([in_dtype, acc_dtype, out_dtype, map_dtype])}
#pragma OPENCL FP_CONTRACT OFF
<% A = t.ctype(acc_dtype) %>\
% if arg:
## argmax/argmin: (value, index) pairs; index -1 is "nothing yet"; NaN wins (numpy returns
## the first NaN); among equal values the lower index wins, so the result is the first one.
inline int ga_better(${A} bv, long bi, ${A} av, long ai) {
    if (bi < 0) return 0;
    if (ai < 0) return 1;
% if acc_dtype.startswith('float'):
    if (isnan(av)) return isnan(bv) && bi < ai;
    if (isnan(bv)) return 1;
% endif
    return bv ${'>' if arg == 'max' else '<'} av || (bv == av && bi < ai);
}
% else:
inline ${A} ga_reduce(${A} a, ${A} b) { return ${reduce_expr}; }
% endif

__kernel void ${name}(
    const ${index_t} ga_m, const ${index_t} ga_n, const ${index_t} ga_chunk
% for d in range(kdim):
    , const ${index_t} ga_kdim${d}
% endfor
% for d in range(rdim):
    , const ${index_t} ga_rdim${d}
% endfor
    , __global const ${t.storage(in_dtype)} *in_p, const ${index_t} in_off
% for d in range(kdim):
    , const ${index_t} in_ks${d}
% endfor
% for d in range(rdim):
    , const ${index_t} in_rs${d}
% endfor
    , __global ${t.storage(out_dtype)} *out_p, const ${index_t} out_off
% for d in range(kdim):
    , const ${index_t} out_ks${d}
% endfor
)
{
% if group:
    const ${index_t} o = (${index_t})get_group_id(0);
    const ${index_t} lid = (${index_t})get_local_id(0);
% else:
    const ${index_t} o = (${index_t})get_global_id(0);
% if guarded:
    if (o >= ga_m) return;
% endif
% endif
    // Where output o starts in the input and the output.
    ${index_t} in_base = in_off, out_i = out_off;
% if kdim == 1:
    in_base += o * in_ks0; out_i += o * out_ks0;
% elif kdim:
    {
        ${index_t} rem = o, c;
% for d in range(kdim - 1, -1, -1):
        c = rem % ga_kdim${d}; rem /= ga_kdim${d};
        in_base += c * in_ks${d}; out_i += c * out_ks${d};
% endfor
    }
% else:
    // One output: the work-groups split the reduced elements into chunks (first stage).
    const ${index_t} first = ${'(' + index_t + ')get_group_id(0) * ga_chunk' if group else '0'};
% endif
    ${A} acc = ${neutral};
% if arg:
    long idx = -1;
% endif
% if group:
    const ${index_t} begin = ${'first' if not kdim else '0'};
    const ${index_t} end = min(begin + ga_chunk, ga_n);
    for (${index_t} k = begin + lid; k < end; k += ${local_size}) {
% else:
    for (${index_t} k = 0; k < ga_n; ++k) {
% endif
% if rdim == 1:
        const ${index_t} at = in_base + k * in_rs0;
% else:
        ${index_t} at = in_base, rem = k, c;
% for d in range(rdim - 1, 0, -1):
        c = rem % ga_rdim${d}; rem /= ga_rdim${d}; at += c * in_rs${d};
% endfor
        at += rem * in_rs0;
% endif
        const ${t.ctype(in_dtype)} v = ${t.load(in_dtype, 'in_p', 'at')};
% if arg:
        const ${A} w = ${t.convert(in_dtype, acc_dtype, 'v')};
        if (ga_better(w, (long)k, acc, idx)) { acc = w; idx = (long)k; }
% else:
        acc = ga_reduce(acc, ${t.convert(map_dtype, acc_dtype, map_expr)});
% endif
    }
% if group:
    __local ${A} part[${local_size}];
    part[lid] = acc;
% if arg:
    __local long pidx[${local_size}];
    pidx[lid] = idx;
% endif
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in [local_size >> j for j in range(1, local_size.bit_length()) ]:
% if arg:
    if (lid < ${s} && ga_better(part[lid + ${s}], pidx[lid + ${s}], part[lid], pidx[lid])) {
        part[lid] = part[lid + ${s}]; pidx[lid] = pidx[lid + ${s}];
    }
% else:
    if (lid < ${s}) part[lid] = ga_reduce(part[lid], part[lid + ${s}]);
% endif
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
    if (lid == 0) {
% if not kdim:
        out_i += (${index_t})get_group_id(0);
% endif
% if arg:
        out_p[out_i] = pidx[0];
% else:
        ${t.store(out_dtype, 'out_p', 'out_i', 'part[0]', acc_dtype)}
% endif
    }
% elif arg:
    out_p[out_i] = idx;
% else:
    ${t.store(out_dtype, 'out_p', 'out_i', 'acc', acc_dtype)}
% endif
}
