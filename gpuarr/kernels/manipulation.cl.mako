## Kernels of gpuarr/manipulation.py; `part` picks what is rendered.
## part == 'take': one gather along an axis, data moved as raw items of `itemsize` bytes
##   (1, 2, 4, 8 or 16), so one build serves every dtype of that size.
##   Inputs: itemsize, index_t ('int' or 'long'), name.
##   Defines: __kernel void ${name}(total, m, inner, out, src, src_off, s_outer, s_axis,
##     s_inner, mode, n, before, table): out (C-contiguous, viewed as (outer, m, inner)) gets
##     out[o, j, r] = src[src_off + o*s_outer + k*s_axis + r*s_inner] (element strides), k
##     from j by `mode`: 0 repeat (table: inclusive cumsum of the n repeats; k is the first
##     index with table[k] > j), 1 edge, 2 reflect, 3 symmetric, 4 wrap (x = j - before
##     mapped into [0, n) as numpy.pad maps it).
## part == 'round_half': no inputs. Defines: float ga_round_half(float x), x rounded to the
##   nearest float16 (numpy's float16 arithmetic rounds every result; float16 computes in
##   float here).
<%page args="part, itemsize=None, index_t=None, name=None"/>\
% if part == 'take':
<% T = {1: 'uchar', 2: 'ushort', 4: 'uint', 8: 'ulong', 16: 'ulong2'}[itemsize] %>\
__kernel void ${name}(
    const ${index_t} total, const ${index_t} m, const ${index_t} inner,
    __global ${T} *out,
    __global const ${T} *src, const ${index_t} src_off,
    const ${index_t} s_outer, const ${index_t} s_axis, const ${index_t} s_inner,
    const int mode, const ${index_t} n, const ${index_t} before,
    __global const long *table)
{
    const ${index_t} g = (${index_t})get_global_id(0);
    if (g >= total)
        return;
    const ${index_t} r = g % inner, t = g / inner;
    const ${index_t} j = t % m, o = t / m;
    ${index_t} k;
    if (mode == 0) {
        ${index_t} lo = 0, hi = n - 1;
        while (lo < hi) {
            const ${index_t} mid = lo + (hi - lo) / 2;
            if (table[mid] > (long)j)
                hi = mid;
            else
                lo = mid + 1;
        }
        k = lo;
    } else {
        const ${index_t} x = j - before;
        if (mode == 1) {
            k = x < 0 ? 0 : (x >= n ? n - 1 : x);
        } else if (mode == 4) {
            k = ((x % n) + n) % n;
        } else if (mode == 2) {
            const ${index_t} p = 2 * (n - 1);
            if (p == 0) {
                k = 0;
            } else {
                const ${index_t} y = ((x % p) + p) % p;
                k = y < n ? y : p - y;
            }
        } else {
            const ${index_t} p = 2 * n;
            const ${index_t} y = ((x % p) + p) % p;
            k = y < n ? y : p - 1 - y;
        }
    }
    out[g] = src[src_off + o * s_outer + k * s_axis + r * s_inner];
}
% elif part == 'round_half':
inline float ga_round_half(float x)
{
    ushort h;
    vstore_half_rte(x, 0, (__private half *)&h);
    return vload_half(0, (__private const half *)&h);
}
% endif
