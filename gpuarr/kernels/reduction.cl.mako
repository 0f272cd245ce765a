## One program of reduction kernels for one operation: part p of output o = reduce over its
## slice of k of map(in[o, k]), one kernel per layout variant (see `variants`).
## Deterministic: the order of combination depends only on the parameters below.
## Inputs (the operation, shared by the variants):
##   in_dtype    storage dtype of the input; acc_dtype the accumulator's
##   map_expr    OpenCL expression of the loaded value `v` (in in_dtype's compute type), of
##               dtype map_dtype, converted to the accumulator
##   user_args   None, or the user's arguments (ReductionKernel) as (name, dtype, is_array):
##               the arrays then share one layout (each with its own offset), and
##               map_expr, in a function of its own, reads array x at the element index `i`
##               as ga_load_x(i)
##   reduce_expr OpenCL expression combining accumulators `a` and `b`
##   neutral     OpenCL expression of the neutral element
##   preamble    OpenCL text placed before the kernels (user helpers)
##   index_t     'int' or 'long'
##   arg         None, or 'max'/'min': track the index of the extremum (argmax/argmin)
##   variants    one kernel each: (name, mode, kdim, rdim, unroll, vec, unit, arg_in, pair,
##               finish, local_size, out_dtype):
##   name        kernel name
##   kdim        kept (output) dimensions passed, >= 1 (a single output: one of size 1);
##               above 1 they may hold padding of size 1 (stride 0), which is skipped
##   rdim        reduced dimensions passed (>= 1); above 1 they may hold padding of size 1
##               (stride 0), which the address arithmetic skips: the caller puts it after
##               the outermost dimension, so that padding costs a uniform branch per element
##   mode        how the work is laid out; part p of output o is (o, p) with o fastest:
##               'group' a work-group per (o, p): its local_size work-items stride over the
##                       slice, `unroll` loads at a time, then a tree in local memory (reduced
##                       axis inner on a GPU: coalesced);
##               'item'  a work-item per (o, p) with `unroll` accumulators over consecutive k
##                       (reduced axis inner on a CPU: vector accumulators where it is
##                       contiguous, see vec, as not every compiler vectorises the unrolled
##                       body (Intel's CPU runtime does not); reduced axis outer on a GPU:
##                       neighbouring work-items read neighbouring addresses); work-items
##                       past the last (o, p) return
##               'band'  a work-item per (block of ga_block outputs, p), kdim == 1, walking k
##                       and accumulating its block's row in the output (reduced axis outer on
##                       a CPU: a contiguous row at a time, as numpy does)
##   unroll      independent loads (group) or accumulators (item) per step
##   vec         group mode: load `vec` elements at once (1: scalar loads) where every slice
##               is contiguous (the elements before a slice's first multiple of vec one at
##               a time);
##               item mode: `unroll` vector accumulators of `vec` elements (vloadn: any
##               alignment) where in_rs0 is 1, map_expr is `v` and in_dtype is acc_dtype
##               (reduce_expr then holds for vectors too: OpenCL's component-wise ?:, ||)
##   unit        band mode: the kept strides of input and output are 1 (the compiler then
##               vectorises the row loop)
##   arg_in      the indices come from an input (a second stage) instead of k
##   pair        with arg: store value and index (a first stage), else the index (int64)
##   finish      group mode with ga_parts > 1: the groups of an output also write their
##               partials (part_p, part_idx) and count themselves in counters[o] (zero
##               before, zero after); the last one reduces the partials into the output, so
##               one launch does both stages (`fence`: the statement fencing global memory
##               at the device's scope, cltypes.device_fence, around that hand-off)
##   local_size  the work-group size (group mode)
##   out_dtype   the output's dtype (band mode and pairs store the accumulator)
## Arguments: ga_m (outputs), ga_n (reduced elements per output), ga_chunk (per part),
## ga_parts, ga_block, [ga_kdims], [ga_rdims], the input (in pointer + offset, or the user's
## arguments), [kept strides], [reduced strides], [index input pointer], out pointer + offset +
## part stride + [kept strides], [index output pointer], [partials, indices, counters].
## Defines: __kernel void <name>(...) per variant
<%! import gpuarr.kernels.cltypes as t %>\
<%
    A = t.ctype(acc_dtype)
    I = index_t
    S = 'const ' + index_t
%>\
${t.fp64_pragma([in_dtype, acc_dtype, map_dtype] + [v[-1] for v in variants])}
#pragma OPENCL FP_CONTRACT OFF
${preamble}
% if user_args is None:
inline ${A} ga_map(const ${t.ctype(in_dtype)} v) {
    return ${t.convert(map_dtype, acc_dtype, map_expr)};
}
inline ${A} ga_element(__global const ${t.storage(in_dtype)} *in_p, const ${I} at) {
    return ga_map(${t.load(in_dtype, 'in_p', 'at')});
}
#define GA_ELEMENT(at) ga_element(in_p, (at))
% else:
## The user's map sees only the user's arguments (under their names) and i.
% for var, dt, is_array in user_args:
% if is_array:
#define ga_load_${var}(i) ${t.load(dt, var, '(i) + ga_off_' + var)}
% endif
% endfor
inline ${A} ga_user_map(
% for var, dt, is_array in user_args:
% if is_array:
    __global const ${t.storage(dt)} *${var}, const ${I} ga_off_${var},
% else:
    const ${t.ctype(dt)} ${var},
% endif
% endfor
    const ${I} i) {
    return (${A})(${map_expr});
}
<% user_values = ''.join(f'ga_u{j}, ga_u{j}_off, ' if is_array else f'ga_u{j}, ' for j, (_, _, is_array) in enumerate(user_args)) %>\
#define GA_ELEMENT(i) ga_user_map(${user_values}(i))
% endif
% if arg:
## (value, index) pairs; index -1 is "nothing yet"; NaN wins (numpy returns the first NaN);
## among equal values the lower index wins, so the result is the first extremum whatever the
## order of combination.
<% cmp = '>' if arg == 'max' else '<' %>\
inline int ga_better(${A} bv, long bi, ${A} av, long ai) {
    if (bi < 0) return 0;
    if (ai < 0) return 1;
% if acc_dtype.startswith('complex'):
    const int bn = isnan(bv.s0) || isnan(bv.s1), an = isnan(av.s0) || isnan(av.s1);
    if (an) return bn && bi < ai;
    if (bn) return 1;
    return bv.s0 ${cmp} av.s0 || (bv.s0 == av.s0 && (bv.s1 ${cmp} av.s1 ||
                                                   (bv.s1 == av.s1 && bi < ai)));
% else:
% if acc_dtype.startswith('float'):
    if (isnan(av)) return isnan(bv) && bi < ai;
    if (isnan(bv)) return 1;
% endif
    return bv ${cmp} av || (bv == av && bi < ai);
% endif
}
#define GA_COMBINE(acc, idx, w, wi) if (ga_better((w), (wi), (acc), (idx))) { acc = (w); idx = (wi); }
## A work-item's own elements come in increasing k: a later one wins only if strictly better,
## a test the compiler can turn into selects (vectorised on CPUs). Indices read from an input
## (arg_in) combine with GA_COMBINE instead.
inline int ga_later_better(${A} w, ${A} acc, long idx) {
% if acc_dtype.startswith('complex'):
    const int wn = isnan(w.s0) || isnan(w.s1), an = isnan(acc.s0) || isnan(acc.s1);
    return idx < 0 || (!an && (wn || w.s0 ${cmp} acc.s0 || (w.s0 == acc.s0 && w.s1 ${cmp} acc.s1)));
% elif acc_dtype.startswith('float'):
    return idx < 0 || (!isnan(acc) && (isnan(w) || w ${cmp} acc));
% else:
    return idx < 0 || w ${cmp} acc;
% endif
}
#define GA_COMBINE_SEQ(acc, idx, w, wi) { const int t_ = ga_later_better((w), (acc), (idx)); acc = t_ ? (w) : (acc); idx = t_ ? (long)(wi) : (idx); }
% else:
inline ${A} ga_reduce(${A} a, ${A} b) { return ${reduce_expr}; }
% for vec in sorted({v[5] for v in variants if v[1] == 'item' and v[5] > 1}):
inline ${A}${vec} ga_reduce${vec}(${A}${vec} a, ${A}${vec} b) { return ${reduce_expr}; }
% endfor
% endif
% for rdim in sorted({v[3] for v in variants} - {1}):

inline ${I} ga_reduced_at${rdim}(${I} at, ${I} rem\
% for d in range(rdim):
, ${S} dim${d}, ${S} stride${d}\
% endfor
) {
% for d in range(rdim - 1, 0, -1):
    if (dim${d} != 1) { at += (rem % dim${d}) * stride${d}; rem /= dim${d}; }
% endfor
    return at + rem * stride0;
}
% endfor
% for v in variants:

${kernel(*v)}\
% endfor
<%def name="kernel(name, mode, kdim, rdim, unroll, vec, unit, arg_in, pair, finish, local_size, out_dtype)">\
<%
    pair = arg and pair
    out_t = A if mode == 'band' or pair else t.storage(out_dtype)
    seq = 'GA_COMBINE' if arg_in else 'GA_COMBINE_SEQ'
%>\
<%def name="address(k)">\
% if rdim == 1:
in_base + (${k}) * in_rs0\
% else:
ga_reduced_at${rdim}(in_base, (${k})\
% for d in range(rdim):
, ga_rdim${d}, in_rs${d}\
% endfor
)\
% endif
</%def>\
<%def name="tree()">\
## work-group tree of acc (and idx) into acc, idx of work-item 0
    part[lid] = acc;
% if arg:
    pidx[lid] = idx;
% endif
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in [local_size >> j for j in range(1, local_size.bit_length())]:
% if arg:
    if (lid < ${s} && ga_better(part[lid + ${s}], pidx[lid + ${s}], part[lid], pidx[lid])) {
        part[lid] = part[lid + ${s}]; pidx[lid] = pidx[lid + ${s}];
    }
% else:
    if (lid < ${s}) part[lid] = ga_reduce(part[lid], part[lid + ${s}]);
% endif
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
    acc = part[0];
% if arg:
    idx = pidx[0];
% endif
</%def>\
<%def name="take(acc, idx, k, at=None)">\
## `at`: the element's address where the caller has it, else address(k)
<% at = at or capture(address, k) %>\
% if arg:
        { const ${I} at = ${at};
          ${seq}(${acc}, ${idx}, GA_ELEMENT(at), ${'iidx_p[at]' if arg_in else '(long)(' + k + ')'}) }
% else:
        ${acc} = ga_reduce(${acc}, GA_ELEMENT((${at})));
% endif
</%def>\
__kernel void ${name}(
    ${S} ga_m, ${S} ga_n, ${S} ga_chunk, ${S} ga_parts, ${S} ga_block
% for d in range(kdim):
    , ${S} ga_kdim${d}
% endfor
% for d in range(rdim):
    , ${S} ga_rdim${d}
% endfor
% if user_args is None:
    , __global const ${t.storage(in_dtype)} *${'restrict ' if mode == 'band' else ''}in_p, ${S} in_off
% else:
% for j, (var, dt, is_array) in enumerate(user_args):
% if is_array:
    , __global const ${t.storage(dt)} *ga_u${j}, ${S} ga_u${j}_off
% else:
    , const ${t.ctype(dt)} ga_u${j}
% endif
% endfor
    , ${S} in_off
% endif
% for d in range(kdim):
    , ${S} in_ks${d}
% endfor
% for d in range(rdim):
    , ${S} in_rs${d}
% endfor
% if arg_in:
    , __global const long *iidx_p
% endif
    , __global ${out_t} *${'restrict ' if mode == 'band' and user_args is None else ''}out_p, ${S} out_off, ${S} out_ps
% for d in range(kdim):
    , ${S} out_ks${d}
% endfor
% if pair:
    , __global long *oidx_p
% endif
% if finish:
    , __global ${A} *part_p
% if arg:
    , __global long *part_idx
% endif
    , __global uint *counters
% endif
)
{
% if mode == 'group':
    const ${I} g = (${I})get_group_id(0), lid = (${I})get_local_id(0);
% elif mode == 'item':
    const ${I} g = (${I})get_global_id(0);
    if (g >= ga_m * ga_parts) return;
% else:
    const ${I} o0 = (${I})get_global_id(0) * ga_block, p = (${I})get_global_id(1);
    const ${I} o1 = min(o0 + ga_block, ga_m);
% endif
% if mode != 'band':
    const ${I} o = g % ga_m, p = g / ga_m;
% endif
    const ${I} begin = p * ga_chunk, end = min(begin + ga_chunk, ga_n);
% if mode == 'band':
<%
    ko = 'o' if unit else 'o * out_ks0'
    ki = 'o' if unit else 'o * in_ks0'
%>    __global ${A} *row = out_p + out_off + p * out_ps;
    for (${I} o = o0; o < o1; ++o) row[${ko}] = ${neutral};
    for (${I} k = begin; k < end; ++k) {
        const ${I} in_base = in_off;
        const ${I} at = ${address('k')};
        for (${I} o = o0; o < o1; ++o) row[${ko}] = ga_reduce(row[${ko}], GA_ELEMENT((at + ${ki})));
    }
% else:
    // Where output o starts in the input and the output.
    ${I} in_base = in_off, out_i = out_off + p * out_ps;
% if kdim == 1:
    in_base += o * in_ks0; out_i += o * out_ks0;
% else:
    {
        ${I} rem = o, c;
% for d in range(kdim - 1, -1, -1):
        if (ga_kdim${d} != 1) {
            c = rem % ga_kdim${d}; rem /= ga_kdim${d};
            in_base += c * in_ks${d}; out_i += c * out_ks${d};
        }
% endfor
    }
% endif
% if mode == 'group':
    ${A} acc = ${neutral};
    long idx = -1;
    ${I} k = begin + lid;
% if vec > 1:
<% V = t.storage(in_dtype) + str(vec) %>    {
        // the slice is contiguous: its elements before the first multiple of ${vec} one at
        // a time, then vector loads, then the tail
        const ${I} head = min((${I})((${vec} - (in_base + begin) % ${vec}) % ${vec}), end - begin);
        if (lid < head)
${take('acc', 'idx', 'begin + lid')}\
        const ${I} vb = begin + head;  // (aligned)
        __global const ${V} *vp = (__global const ${V} *)(in_p + in_base + vb);
        const ${I} nv = (end - vb) / ${vec};
        ${I} kv = lid;
        for (; kv + ${(unroll - 1) * local_size} < nv; kv += ${unroll * local_size}) {
% for j in range(unroll):
            const ${V} q${j} = vp[kv + ${j * local_size}];
% endfor
% for j in range(unroll):
% for c in range(vec):
% if arg:
            GA_COMBINE_SEQ(acc, idx, ga_map(q${j}.s${'%x' % c}), (long)(vb + (kv + ${j * local_size}) * ${vec} + ${c}))
% else:
            acc = ga_reduce(acc, ga_map(q${j}.s${'%x' % c}));
% endif
% endfor
% endfor
        }
        for (; kv < nv; kv += ${local_size}) {
            const ${V} q = vp[kv];
% for c in range(vec):
% if arg:
            GA_COMBINE_SEQ(acc, idx, ga_map(q.s${'%x' % c}), (long)(vb + kv * ${vec} + ${c}))
% else:
            acc = ga_reduce(acc, ga_map(q.s${'%x' % c}));
% endif
% endfor
        }
        k = vb + nv * ${vec} + lid;
    }
% endif
    for (; k + ${(unroll - 1) * local_size} < end; k += ${unroll * local_size}) {
## independent loads first, then the combination in a fixed order
% for j in range(unroll):
        const ${I} at${j} = ${address('k + ' + str(j * local_size))};
% endfor
% for j in range(unroll):
        const ${A} w${j} = GA_ELEMENT(at${j});
% endfor
% for j in range(unroll):
% if arg:
        ${seq}(acc, idx, w${j}, ${'iidx_p[at' + str(j) + ']' if arg_in else '(long)(k + ' + str(j * local_size) + ')'})
% else:
        acc = ga_reduce(acc, w${j});
% endif
% endfor
    }
    for (; k < end; k += ${local_size})
${take('acc', 'idx', 'k')}\
    __local ${A} part[${local_size}];
% if arg:
    __local long pidx[${local_size}];
% endif
${tree()}\
% if finish:
    // The last of the ga_parts groups of output o to finish reduces their partials, in
    // part order (so the result does not depend on which group came last).
    __local int ga_last;
    if (lid == 0) {
        part_p[p * ga_m + o] = acc;
% if arg:
        part_idx[p * ga_m + o] = idx;
% endif
        ${fence};
        ga_last = atomic_inc(&counters[o]) == (uint)(ga_parts - 1);
        if (ga_last)
            ${fence};  // (the other groups' partials, read below after the barrier)
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!ga_last) return;
    acc = ${neutral};
    idx = -1;
    for (${I} q = lid; q < ga_parts; q += ${local_size}) {
        const ${A} w = ((volatile __global ${A} *)part_p)[q * ga_m + o];
% if arg:
        GA_COMBINE(acc, idx, w, ((volatile __global long *)part_idx)[q * ga_m + o])
% else:
        acc = ga_reduce(acc, w);
% endif
    }
${tree()}\
    if (lid == 0) counters[o] = 0;
% endif
    if (lid != 0) return;
% elif vec > 1 and arg:
## item mode, vectors, with the index: lane c of accumulator j sees elements begin + j * vec
## + c + s * unroll * vec in turn (a later one wins only if strictly better, so each lane
## holds its first extremum: its index starts at its first element's); then the lanes
## combine (the lower index wins among equals) and the tail follows in order.
<%
    V, IV = A + str(vec), I + str(vec)
    CT = ('long' if A in ('double', 'long', 'ulong') else 'int') + str(vec)  # comparisons' type
    cmp = '>' if arg == 'max' else '<'
    better = f'((vacc{{j}} == vacc{{j}}) & ((w != w) | (w {cmp} vacc{{j}})))' \
        if acc_dtype.startswith('float') else f'(w {cmp} vacc{{j}})'
%>\
    __global const ${t.storage(in_dtype)} *row = in_p + in_base;
    const ${IV} lane = (${IV})(${', '.join(str(c) for c in range(vec))});
% for j in range(unroll):
    ${V} vacc${j} = (${V})(${neutral});
    ${IV} vidx${j} = lane + (begin + ${j * vec});
% endfor
    ${I} k = begin;
    for (; k + ${unroll * vec} <= end; k += ${unroll * vec}) {
% for j in range(unroll):
        {
            const ${V} w = vload${vec}(0, row + k${f' + {j * vec}' if j else ''});
            const ${CT} b = ${better.format(j=j)};
            vacc${j} = select(vacc${j}, w, b);
            vidx${j} = select(vidx${j}, lane + (k + ${j * vec}), convert_${IV}(b));
        }
% endfor
    }
    ${A} acc = ${neutral};
    long idx = -1;
    if (k != begin) {
% for j in range(unroll):
% for c in range(vec):
        GA_COMBINE(acc, idx, vacc${j}.s${'%x' % c}, (long)vidx${j}.s${'%x' % c})
% endfor
% endfor
    }
    for (; k < end; ++k)
        GA_COMBINE_SEQ(acc, idx, row[k], (long)k)
% elif vec > 1:
## item mode, vectors: `unroll` vector accumulators over consecutive k (a contiguous slice:
## in_rs0 is 1), combined as a balanced tree, then their components as one
<% V = A + str(vec) %>\
    __global const ${t.storage(in_dtype)} *row = in_p + in_base;
% for j in range(unroll):
    ${V} vacc${j} = (${V})(${neutral});
% endfor
    ${I} k = begin;
    for (; k + ${unroll * vec} <= end; k += ${unroll * vec}) {
% for j in range(unroll):
        vacc${j} = ga_reduce${vec}(vacc${j}, vload${vec}(0, row + k${f' + {j * vec}' if j else ''}));
% endfor
    }
    for (; k + ${vec} <= end; k += ${vec})
        vacc0 = ga_reduce${vec}(vacc0, vload${vec}(0, row + k));
<% width = unroll %>\
% while width > 1:
<% width //= 2 %>\
% for j in range(width):
    vacc${j} = ga_reduce${vec}(vacc${j}, vacc${j + width});
% endfor
% endwhile
<%
    comps = ['vacc0.s%x' % c for c in range(vec)]
    while len(comps) > 1:
        comps = ['ga_reduce(%s, %s)' % (comps[c], comps[c + 1]) for c in range(0, len(comps), 2)]
%>\
    ${A} acc = ${comps[0]};
    for (; k < end; ++k)
        acc = ga_reduce(acc, row[k]);
% else:
## item mode: `unroll` accumulators over consecutive k, combined as a balanced tree
% for j in range(unroll):
    ${A} acc${j} = ${neutral};
    long idx${j} = -1;
% endfor
    ${I} k = begin;
    for (; k + ${unroll} <= end; k += ${unroll}) {
% if rdim == 1:
## The step's base address, then constant offsets: (k + j) * stride costs a multiply per
## element where the compiler does not distribute it (Intel's CPU runtime: 7x slower).
        const ${I} ga_at = in_base + k * in_rs0;
% for j in range(unroll):
${take('acc' + str(j), 'idx' + str(j), 'k + ' + str(j), 'ga_at' if j == 0 else f'ga_at + {j} * in_rs0')}\
% endfor
% else:
% for j in range(unroll):
${take('acc' + str(j), 'idx' + str(j), 'k + ' + str(j))}\
% endfor
% endif
    }
    for (; k < end; ++k)
${take('acc0', 'idx0', 'k')}\
<% width = unroll %>\
% while width > 1:
<% width //= 2 %>\
% for j in range(width):
% if arg:
    GA_COMBINE(acc${j}, idx${j}, acc${j + width}, idx${j + width})
% else:
    acc${j} = ga_reduce(acc${j}, acc${j + width});
% endif
% endfor
% endwhile
    const ${A} acc = acc0;
% if arg:
    const long idx = idx0;
% endif
% endif
% if pair:
    out_p[out_i] = acc;
    oidx_p[out_i] = idx;
% elif arg:
    out_p[out_i] = idx;
% else:
    ${t.store(out_dtype, 'out_p', 'out_i', 'acc', acc_dtype)}
% endif
% endif
}
</%def>\
