## Row gathers (gpuarr/indexing.py: x[idx] with a 1-d integer index on the first axis,
## take(axis=0)): out row r = data row idx[r], for rows that are contiguous runs of bytes in
## both. Rows move as vectors of 16, 8, 4, 2 or 1 bytes (the widest that divides the row,
## the offsets and the row step), whatever the element type.
## Inputs: none (one program serves every element type and size).
## Defines, for each vector size v in bytes:
##   gather_rows_<v>(rows, vecs, size, axis, code, mode, data, data_off, row_step, idx,
##       idx_off, idx_step, out, out_off, flag): a 2-d range, dimension 1 the output row,
##       dimension 0 one work-group wide (its work-items walk the row's `vecs` vectors
##       together: neighbouring work-items, neighbouring vectors). Offsets and steps count
##       vectors; index r is element idx_off + r * idx_step of idx, loaded by its type code
##       (indexing.py's _CODES) and resolved as ga_take_<s> does (mode 0 raise: an index out
##       of range is recorded in flag[1..3] as (index, axis, size), flag[0] claimed by an
##       atomic, and its row is not read; 1 wrap; 2 clip).

inline long ga_row_index(__global const char *p, const long i, const int code)
{
    switch (code) {
    case 1: return p[i];
    case 2: return ((__global const uchar *)p)[i];
    case 3: return ((__global const short *)p)[i];
    case 4: return ((__global const ushort *)p)[i];
    case 5: return ((__global const int *)p)[i];
    case 6: return ((__global const uint *)p)[i];
    default: return ((__global const long *)p)[i];
    }
}

inline long ga_row_resolve(long v, const long size, const int mode, __global long *flag,
                           const long axis)
{
    if (mode == 1) {
        v %= size;
        return v < 0 ? v + size : v;
    }
    if (mode == 2)
        return clamp(v, 0L, size - 1);
    const long w = v < 0 ? v + size : v;
    if (w >= 0 && w < size)
        return w;
    if (atomic_cmpxchg((volatile __global int *)flag, 0, 1) == 0) {
        flag[1] = v;
        flag[2] = axis;
        flag[3] = size;
    }
    return -1;
}
% for vb, vt in ((16, 'uint4'), (8, 'uint2'), (4, 'uint'), (2, 'ushort'), (1, 'uchar')):

__kernel void gather_rows_${vb}(const ulong rows, const uint vecs, const long size,
                                const long axis, const int code, const int mode,
                                __global const ${vt} *data, const ulong data_off,
                                const long row_step, __global const char *idx,
                                const long idx_off, const long idx_step,
                                __global ${vt} *out, const ulong out_off,
                                __global long *flag)
{
    const ulong r = get_global_id(1);
    if (r >= rows)
        return;
    const long v = ga_row_resolve(ga_row_index(idx, idx_off + (long)r * idx_step, code), size,
                                  mode, flag, axis);
    if (v < 0)
        return;  // no access through an index out of range
    __global const ${vt} *src = data + data_off + v * row_step;
    __global ${vt} *dst = out + out_off + r * vecs;
    for (uint c = get_local_id(0); c < vecs; c += get_local_size(0))
        dst[c] = src[c];
}
% endfor
