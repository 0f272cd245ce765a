## Helper functions the ufunc snippets call, emitted once per (helper, type) a kernel needs.
## Inputs: helpers  tuple of (helper name, T) where T is an OpenCL C scalar type (or float2 /
##                  double2 for the complex helpers; R is then their real type).
## Defines: ga_<helper>_<T>(...) for each entry. numpy's semantics: integer division by 0
## gives 0, INT_MIN // -1 wraps, floor division and remainder take the divisor's sign,
## shifts past the width give 0 (or -1 for negative values shifted right).
% for helper, T in helpers:
<% R = {'float2': 'float', 'double2': 'double'}.get(T, T) %>\
% if helper == 'floordiv':
inline ${T} ga_floordiv_${T}(${T} a, ${T} b) {
    if (b == 0) return 0;
    if (b == -1) return (${T})(0 - a);
    ${T} q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
% elif helper == 'mod':
inline ${T} ga_mod_${T}(${T} a, ${T} b) {
    if (b == 0 || b == -1) return 0;
    ${T} r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
% elif helper == 'fmod_int':
inline ${T} ga_fmod_int_${T}(${T} a, ${T} b) {
    return (b == 0 || b == -1) ? 0 : a % b;
}
% elif helper == 'floordivf' or helper == 'modf':
## numpy's npy_divmod: the quotient rounded so that a == q * b + r with r of b's sign.
inline ${T} ga_${helper}_${T}(${T} a, ${T} b) {
    ${T} mod = fmod(a, b);
    if (b == 0) return ${'a / b' if helper == 'floordivf' else 'mod'};
    ${T} div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) { mod += b; div -= 1; }
    } else {
        mod = copysign((${T})0, b);
    }
% if helper == 'floordivf':
    if (div != 0) {
        ${T} fl = floor(div);
        if (div - fl > (${T})0.5) fl += 1;
        return fl;
    }
    return copysign((${T})0, a / b);
% else:
    return mod;
% endif
}
% elif helper == 'ipow':
inline ${T} ga_ipow_${T}(${T} base, ${T} exp) {
    ${T} result = 1;
    if (exp < 0) return base == 1 ? 1 : (base == (${T})-1 ? ((exp & 1) ? -1 : 1) : 0);
    while (exp) {
        if (exp & 1) result *= base;
        exp >>= 1;
        base *= base;
    }
    return result;
}
% elif helper == 'lshift':
inline ${T} ga_lshift_${T}(${T} a, ${T} b) {
    return (b >= 0 && b < (${T})(sizeof(${T}) * 8)) ? (${T})(a << b) : (${T})0;
}
% elif helper == 'rshift':
inline ${T} ga_rshift_${T}(${T} a, ${T} b) {
    if (b >= 0 && b < (${T})(sizeof(${T}) * 8)) return (${T})(a >> b);
    return a < 0 ? (${T})-1 : (${T})0;
}
% elif helper == 'logaddexp':
inline ${T} ga_logaddexp_${T}(${T} a, ${T} b) {
    if (a == b) return a + (${T})M_LN2;
    ${T} d = a - b;
    return d > 0 ? a + log1p(exp(-d)) : (d <= 0 ? b + log1p(exp(d)) : d);
}
% elif helper == 'logaddexp2':
inline ${T} ga_logaddexp2_${T}(${T} a, ${T} b) {
    if (a == b) return a + 1;
    ${T} d = a - b;
    return d > 0 ? a + log1p(exp2(-d)) * (${T})M_LOG2E
                 : (d <= 0 ? b + log1p(exp2(d)) * (${T})M_LOG2E : d);
}
% elif helper in ('nextafter_half', 'nextafter_half_keep_x'):
## float16 stored as half, computed as float: step the half's bits, not the float's.
## The bits are computed arithmetically (no pointer punning, which drivers treat unevenly).
inline ushort ga_half_bits_${helper}_${T}(float a) {
    uint b = as_uint(a), sign = (b >> 16) & 0x8000u, mag = b & 0x7fffffffu;
    if (mag == 0) return (ushort)sign;
    int e = (int)(mag >> 23) - 127 + 15;
    uint m = (mag & 0x7fffffu) | 0x800000u;
    if (e >= 31) return (ushort)(sign | 0x7c00u);
    if (e <= 0) return (ushort)(sign | (m >> (14 - e)));
    return (ushort)(sign | ((uint)e << 10) | ((m >> 13) & 0x3ffu));
}
inline float ga_half_value_${helper}_${T}(ushort h) {
    float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 31) return m ? NAN : sign * INFINITY;
    if (e == 0) return sign * ldexp((float)m, -24);
    return sign * ldexp((float)(m | 0x400u), (int)e - 25);
}
inline float ga_nextafter_half_${T}(float a, float b) {
    if (isnan(a) || isnan(b)) return a + b;
    if (a == b) return ${'a' if helper == 'nextafter_half_keep_x' else 'b'};  // -0.0 vs 0.0
    ushort bits = ga_half_bits_${helper}_${T}(a);
    if (a == 0) bits = (b > 0) ? (ushort)1 : (ushort)0x8001;
    else if ((a < b) == (a > 0)) bits += 1;
    else bits -= 1;
    return ga_half_value_${helper}_${T}(bits);
}
% elif helper == 'cmul':
inline ${T} ga_cmul_${T}(${T} a, ${T} b) {
    return (${T})(a.s0 * b.s0 - a.s1 * b.s1, a.s0 * b.s1 + a.s1 * b.s0);
}
% elif helper == 'cdiv':
## Smith's algorithm, as numpy uses, to avoid needless overflow.
inline ${T} ga_cdiv_${T}(${T} a, ${T} b) {
    ${R} abs_br = fabs(b.s0), abs_bi = fabs(b.s1);
    if (abs_br >= abs_bi) {
        if (abs_br == 0 && abs_bi == 0) return (${T})(a.s0 / abs_br, a.s1 / abs_bi);
        ${R} rat = b.s1 / b.s0, scl = 1 / (b.s0 + b.s1 * rat);
        return (${T})((a.s0 + a.s1 * rat) * scl, (a.s1 - a.s0 * rat) * scl);
    }
    ${R} rat = b.s0 / b.s1, scl = 1 / (b.s1 + b.s0 * rat);
    return (${T})((a.s0 * rat + a.s1) * scl, (a.s1 * rat - a.s0) * scl);
}
% elif helper == 'csign':
inline ${T} ga_csign_${T}(${T} a) {
    ${R} m = hypot(a.s0, a.s1);
    return m == 0 ? (${T})(0, 0) : (${T})(a.s0 / m, a.s1 / m);
}
% endif
% endfor
