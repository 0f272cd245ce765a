## Scans along one axis (cumsum, cumprod, ScanKernel), for rows of any layout. A row is cut
## in chunks. Two forms (`lookback`):
## - reduce-then-scan (CPUs): the reduction kernel first writes each chunk's total to
##   totals[c * rows + r], then
##   ${name}_carry   a work-item per row: exclusive scan of its chunk totals, in place
##   ${name}_scan<kdim>  (one per kdim) a work-group per (row r, chunk c), o = r fastest
##                   (below), starting from the carry. Every element is read twice.
## - one pass (GPUs): ${name}_lookback<kdim>, a work-group per chunk of one block, tiles
##   numbered in the order work-groups start (a counter): a tile scans its block, publishes
##   its total, then adds up the totals of the row's earlier chunks (below), waiting only on
##   tiles that started earlier (no deadlock whatever order the device runs work-groups in).
##   Every element is read once. With `columns` (rows whose neighbours are neighbours in
##   memory, the scan axis strided: cumsum(axis=0) of a C-ordered matrix),
##   ${name}_columns<kdim> instead: a work-group per (local_size neighbouring rows, chunk
##   of `unroll` elements), a work-item scanning its row's chunk in registers and folding
##   its row's earlier chunk totals itself (groups of 16 chunks), so loads and stores
##   stay coalesced; its words are zeroed before each scan (a fill), not after (its many
##   slots would take the last tile long).
## A block: local_size * unroll elements, coalesced loads into local memory, a serial scan of
## `unroll` consecutive elements per work-item, a Hillis-Steele scan of the work-items'
## totals, coalesced stores. The work is O(n).
## Look-back (words: uint, zero before a scan; _lookback leaves them zero): words[0] hands
## out tile numbers, words[1] counts the tiles done (the last one zeroes the words). Tile
## t = c * rows + r publishes its total in slot 2 t, and the last chunk of each group of
## local_size / 4 chunks its group's total in slot 2 t + 1 (a slot: the accumulator in
## 16-bit pieces, each in a 32-bit word beside a ready tag). A tile's carry is the in-order
## sum of the totals of the groups before its own and of its group's chunks before it,
## folded in a fixed order (a Hillis-Steele scan over the work-items), so results do not
## depend on timing: the same bits every run.
## Inputs: in_dtype, acc_dtype, out_dtype; op_expr combines accumulators a and b; neutral;
##   preamble (user helpers); exclusive (element k gets the scan of elements before it);
##   kdims: the numbers of row dimensions passed, a scan kernel each (>= 1; the caller may pad
##   them with size 1, stride 0); local_size (power of two; >= 4 with lookback); unroll;
##   index_t; lookback; columns; slot_words (lookback: 16-bit pieces of an accumulator);
##   poll_atomic (lookback: read the words by atomics).
## Arguments of _scan<kdim>: ga_rows, ga_n (row length), ga_chunk, [ga_kdims], in pointer + offset
##   + [row strides] + step, out pointer + offset + [row strides] + step, totals pointer.
## Arguments of _lookback<kdim> and _columns<kdim>: the same up to out's step (ga_chunk: a
##   tile's elements of a row), then words.
<%! import gpuarr.kernels.cltypes as t %>\
<%
    A = t.ctype(acc_dtype)
    I = index_t
    S = 'const ' + index_t
    L = local_size
    U = unroll
%>\
${t.fp64_pragma([in_dtype, acc_dtype, out_dtype])}
#pragma OPENCL FP_CONTRACT OFF
${preamble}
inline ${A} ga_op(${A} a, ${A} b) { return ${op_expr}; }
// local memory index, padded against bank conflicts of the serial per-item reads
#define GA_PAD(j) ((j) + ((j) >> 5))
% if lookback:
<% P = slot_words %>
// look-back slots: an accumulator as ${P} 32-bit words, each a 16-bit piece beside a ready
// tag (bit 16), written by atomics and read whole (atomics, or plain loads where
// poll_atomic is off), so a reader that sees the tag has the piece: no ordering between
// stores is needed (OpenCL 1.2 has none across work-groups). words[0] counts the tiles
// started, words[1] those finished
typedef union { ${A} v; ushort w[${P}]; } ga_pun;
inline void ga_publish(__global volatile uint *words, const ${I} slot, const ${A} v)
{
    ga_pun p;
    p.v = v;
% for i in range(P):
    atomic_xchg(&words[2 + slot * ${P} + ${i}], 0x10000u | p.w[${i}]);
% endfor
}
inline ${A} ga_await(__global volatile uint *words, const ${I} slot)
{
    ga_pun p;
% for i in range(P):
    for (uint x = 0; !(x >> 16);) {
        x = ${'atomic_or(&words[2 + slot * %d + %d], 0u)' % (P, i) if poll_atomic else 'words[2 + slot * %d + %d]' % (P, i)};
        p.w[${i}] = (ushort)x;
    }
% endfor
    return p.v;
}
% endif

% if not lookback:
__kernel void ${name}_carry(${S} ga_rows, ${S} ga_chunks, __global ${A} *totals)
{
    const ${I} r = (${I})get_global_id(0);
    if (r >= ga_rows) return;
    ${A} acc = ${neutral};
    for (${I} c = 0; c < ga_chunks; ++c) {
        const ${A} v = totals[c * ga_rows + r];
        totals[c * ga_rows + r] = acc;
        acc = ga_op(acc, v);
    }
}
% endif

<%def name="row_base(var, kdim)">\
    ${I} ${var}_base = ${var}_off;
% if kdim == 1:
    ${var}_base += r * ${var}_ks0;
% else:
    {
        ${I} rem = r, c;
% for d in range(kdim - 1, -1, -1):
        if (ga_kdim${d} != 1) { c = rem % ga_kdim${d}; rem /= ga_kdim${d}; ${var}_base += c * ${var}_ks${d}; }
% endfor
    }
% endif
</%def>\
<%def name="block_scan()">\
        // the block at `base` into local memory, a serial scan of each work-item's
        // elements (pre_j: the scan up to element j), Hillis-Steele over the work-items
% for j in range(U):
        {
            const ${I} k = base + ${j * L} + lid;
            block[GA_PAD(${j * L} + lid)] = k < end ? ${t.convert(in_dtype, acc_dtype, t.load(in_dtype, 'in_p', 'in_base + k * in_step'))} : ${neutral};
        }
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
        ${A} acc = ${neutral};
% for j in range(U):
        const ${A} pre${j} = ${'acc' if exclusive else 'ga_op(acc, block[GA_PAD(lid * ' + str(U) + ' + ' + str(j) + ')])'};
% if exclusive:
        acc = ga_op(acc, block[GA_PAD(lid * ${U} + ${j})]);
% else:
        acc = pre${j};
% endif
% endfor
% if L > 1:
        item_total[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
% for s in [1 << j for j in range(L.bit_length() - 1)]:
        if (lid >= ${s}) acc = ga_op(item_total[lid - ${s}], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
        item_total[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
% endfor
% else:
        item_total[0] = acc;
% endif
</%def>\
<%def name="block_store(before)">\
        // the block's results, starting from `before` (this work-item's elements' carry)
% for j in range(U):
        block[GA_PAD(lid * ${U} + ${j})] = ga_op(${before}, pre${j});
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
% for j in range(U):
        {
            const ${I} k = base + ${j * L} + lid;
            if (k < end) {
                const ${I} at = out_base + k * out_step;
                ${t.store(out_dtype, 'out_p', 'at', 'block[GA_PAD(' + str(j * L) + ' + lid)]', acc_dtype)}
            }
        }
% endfor
</%def>\
<%def name="segment_scan(lo, hi)">\
    // item_total[i] = the in-order sum of the work-items' `part` from ${lo} to i, for i in
    // [${lo}, ${hi}); the other entries are left
    barrier(CLK_LOCAL_MEM_FENCE);
    item_total[lid] = part;
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in [1 << j for j in range((hi - lo - 1).bit_length())]:
    if (lid >= ${lo + s} && lid < ${hi})
        part = ga_op(item_total[lid - ${s}], part);
    barrier(CLK_LOCAL_MEM_FENCE);
    item_total[lid] = part;
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
</%def>\
<%def name="signature(kernel, kdim)">\
__kernel void ${name}_${kernel}${kdim}(
    ${S} ga_rows, ${S} ga_n, ${S} ga_chunk
% for d in range(kdim):
    , ${S} ga_kdim${d}
% endfor
% for var, dt in (('in', in_dtype), ('out', out_dtype)):
    , __global ${'const ' if var == 'in' else ''}${t.storage(dt)} *${var}_p, ${S} ${var}_off
% for d in range(kdim):
    , ${S} ${var}_ks${d}
% endfor
    , ${S} ${var}_step
% endfor
</%def>\
% for kdim in kdims:
% if lookback and columns:
<% G = 16 %>
${signature('columns', kdim)}\
    , __global volatile uint *words)
{
    __local int ticket;
    const ${I} lid = (${I})get_local_id(0);
    if (lid == 0)
        ticket = atomic_inc(words);
    barrier(CLK_LOCAL_MEM_FENCE);
    const ${I} blocks = (ga_rows + ${L - 1}) / ${L}, chunks = (ga_n + ${U - 1}) / ${U};
    const ${I} g = ticket, c = g / blocks, r = (g % blocks) * ${L} + lid;
    const int live = r < ga_rows;
${row_base('in', kdim)}\
${row_base('out', kdim)}\
    const ${I} base = c * ${U};
    // this row's ${U} elements of chunk c (neighbouring work-items: neighbouring rows,
    // neighbouring addresses), scanned in registers
    ${A} acc = ${neutral};
% for j in range(U):
    const ${A} x${j} = live && base + ${j} < ga_n ? ${t.convert(in_dtype, acc_dtype, t.load(in_dtype, 'in_p', 'in_base + (base + %d) * in_step' % j))} : ${neutral};
% if exclusive:
    const ${A} pre${j} = acc;
    acc = ga_op(acc, x${j});
% else:
    acc = ga_op(acc, x${j});
    const ${A} pre${j} = acc;
% endif
% endfor
    // the carry, in a fixed order: the row's chunks of c's group before c, whose sum with
    // this chunk's total is the group's total where c ends a group; then the group totals
    // before it (groups of ${G} chunks)
    const ${I} groups = c / ${G};
    ${A} in_group = ${neutral}, before = ${neutral};
    if (live) {
        ga_publish(words, 2 * (c * ga_rows + r), acc);
        for (${I} q = groups * ${G}; q < c; ++q)
            in_group = ga_op(in_group, ga_await(words, 2 * (q * ga_rows + r)));
        if (c % ${G} == ${G - 1})
            ga_publish(words, 2 * (c * ga_rows + r) + 1, ga_op(in_group, acc));
        for (${I} q = 0; q < groups; ++q)
            before = ga_op(before, ga_await(words, 2 * ((q * ${G} + ${G - 1}) * ga_rows + r) + 1));
        before = ga_op(before, in_group);
    }
% for j in range(U):
    if (live && base + ${j} < ga_n) {
        const ${I} at = out_base + (base + ${j}) * out_step;
        const ${A} y = ga_op(before, pre${j});
        ${t.store(out_dtype, 'out_p', 'at', 'y', acc_dtype)}
    }
% endfor
}
% elif lookback:
<% G = L // 4 %>
${signature('lookback', kdim)}\
    , __global volatile uint *words)
{
    __local ${A} block[GA_PAD(${L * U})];
    __local ${A} item_total[${L}];
    __local int ticket;
    const ${I} lid = (${I})get_local_id(0);
    if (lid == 0)
        ticket = atomic_inc(words);
    barrier(CLK_LOCAL_MEM_FENCE);
    const ${I} g = ticket, r = g % ga_rows, c = g / ga_rows;
${row_base('in', kdim)}\
${row_base('out', kdim)}\
    const ${I} base = c * ga_chunk, end = min(base + ga_chunk, ga_n);
${block_scan()}\
    const ${A} total = item_total[${L - 1}];
    const ${A} mine = lid ? item_total[lid - 1] : ${neutral};
    if (lid == 0)
        ga_publish(words, 2 * g, total);
    // The carry, in a fixed order: first the chunks of c's group before c (work-items
    // [${L - G}, ${L}), one each), whose sum with this tile's total is the group's total where c
    // ends a group; then the totals of the groups before (work-items [0, ${L - G}), a run
    // each, in order). A Hillis-Steele scan over each range.
    const ${I} groups = c / ${G}, first = groups * ${G};
    ${A} part = ${neutral};
    if (lid >= ${L - G} && first + lid - ${L - G} < c) {
        part = ga_await(words, 2 * ((first + lid - ${L - G}) * ga_rows + r));
    }
${segment_scan(L - G, L)}\
    const ${A} in_group = item_total[${L - 1}];
    if (lid == 0 && c % ${G} == ${G - 1})
        ga_publish(words, 2 * g + 1, ga_op(in_group, total));
    part = ${neutral};
    {
        const ${I} per = (groups + ${L - G - 1}) / ${L - G};
        for (${I} q = lid * per; lid < ${L - G} && q < min(lid * per + per, groups); ++q) {
            part = ga_op(part, ga_await(words, 2 * ((q * ${G} + ${G - 1}) * ga_rows + r) + 1));
        }
    }
${segment_scan(0, L - G)}\
    const ${A} carry = ga_op(item_total[${L - G - 1}], in_group);
    const ${A} before = ga_op(carry, mine);
${block_store('before')}\
    // the last tile to finish zeroes the words for the next scan (every other tile is
    // done with them)
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0)
        ticket = atomic_inc(&words[1]) == ga_rows * ((ga_n + ga_chunk - 1) / ga_chunk) - 1;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (ticket)
        for (${I} i = lid; i < 2 + ga_rows * ((ga_n + ga_chunk - 1) / ga_chunk) * ${2 * P}; i += ${L})
% if poll_atomic:
            atomic_xchg(&words[i], 0u);
% else:
            words[i] = 0u;  // (plain stores: none waits for the memory)
% endif
}
% else:

${signature('scan', kdim)}\
    , __global const ${A} *totals)
{
    const ${I} g = (${I})get_group_id(0), lid = (${I})get_local_id(0);
    const ${I} r = g % ga_rows, chunk = g / ga_rows;
${row_base('in', kdim)}\
${row_base('out', kdim)}\
    const ${I} begin = chunk * ga_chunk, end = min(begin + ga_chunk, ga_n);
    __local ${A} block[GA_PAD(${L * U})];
    __local ${A} item_total[${L}];
    ${A} carry = totals[g];
    for (${I} base = begin; base < end; base += ${L * U}) {
${block_scan()}\
        const ${A} before = ga_op(carry, lid ? item_total[lid - 1] : ${neutral});
${block_store('before')}\
        carry = ga_op(carry, item_total[${L - 1}]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
% endif
% endfor
