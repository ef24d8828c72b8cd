//! A bfloat16 matrix product for [`super::cpu`]'s 3x3 convolutions on CPUs
//! with AVX-512 BF16 (`vdpbf16ps`: sixteen lanes, each adding the products
//! of two bf16 pairs to an f32 sum, twice the multiply-adds of an f32 FMA
//! per instruction). Inputs and weights are rounded to bf16 (8 bits of
//! mantissa); the sums stay f32.
//!
//! Operands are stored as pairs: a `u32` holds elements `2p` (low half)
//! and `2p + 1` (high half) along the summed dimension, padded with a zero
//! when that dimension is odd.

/// The instructions that multiply bf16 matrices: AMX's tiles
/// ([`super::amx`]) or AVX-512 BF16's vectors (this module's kernel).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kernel {
    Amx,
    Avx512,
}

named_enum!(Kernel, "bf16 kernel", { Amx => "amx", Avx512 => "avx512" });

impl Kernel {
    /// The fastest kernel this CPU runs: AMX where it has it, else
    /// AVX-512 BF16; `None` with neither.
    pub fn best() -> Option<Kernel> {
        // `ALL` lists the kernels fastest first.
        Kernel::ALL.iter().copied().find(|k| k.available())
    }

    /// Whether this CPU (and OS) runs it.
    pub fn available(self) -> bool {
        match self {
            Kernel::Amx => super::amx::supported() && supported(),
            Kernel::Avx512 => supported(),
        }
    }

    /// Pairs along a summed dimension of `k` as this kernel's operands
    /// hold them (AMX's padded to whole tiles).
    pub fn pairs(self, k: usize) -> usize {
        match self {
            Kernel::Amx => pairs(k).next_multiple_of(super::amx::TILE),
            Kernel::Avx512 => pairs(k),
        }
    }

    /// Rows of the left operand for a product of `m` rows (AMX's padded to
    /// whole tiles).
    pub fn rows(self, m: usize) -> usize {
        match self {
            Kernel::Amx => m.next_multiple_of(super::amx::TILE),
            Kernel::Avx512 => m,
        }
    }

    /// `out[m x n] = lhs[rows(m) x k2] * rhs[k2 x n]` in pairs, `k2` from
    /// [`Kernel::pairs`]; call only where [`Kernel::available`].
    pub fn matmul(self, out: &mut [f32], lhs: &[u32], rhs: &[u32], m: usize, k2: usize, n: usize) {
        match self {
            Kernel::Amx => super::amx::matmul(out, lhs, rhs, m, k2, n),
            Kernel::Avx512 => matmul(out, lhs, rhs, m, k2, n),
        }
    }
}

/// Whether this CPU has the instructions.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `x` rounded to the nearest bf16 (ties to even).
#[inline]
pub fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let rounded = (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16;
    // A NaN stays a NaN (quiet), whatever rounding did to its payload.
    if x.is_nan() { ((bits >> 16) | 0x40) as u16 } else { rounded }
}

/// `dst[i] = to_bf16(src[i])` (with AVX-512 BF16's conversion where the
/// CPU has it: the same rounding, sixteen at a time).
pub fn round(src: &[f32], dst: &mut [u16]) {
    assert_eq!(src.len(), dst.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if supported() {
        // SAFETY: the CPU has the instructions, and both slices have the
        // same length (asserted).
        done = unsafe { x86::round(src, dst) };
    }
    for (d, &x) in dst[done..].iter_mut().zip(&src[done..]) {
        *d = to_bf16(x);
    }
}

/// Writes `value`, rounded, as element `e` of a row of pairs (tests build
/// left operands with it).
#[cfg(test)]
pub(crate) fn put(row: &mut [u32], e: usize, value: f32) {
    let h = u32::from(to_bf16(value));
    let w = &mut row[e / 2];
    *w = if e.is_multiple_of(2) { (*w & 0xffff_0000) | h } else { (*w & 0xffff) | (h << 16) };
}

/// The f32 value of a bf16.
pub fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Number of pairs along a summed dimension of `k`.
pub fn pairs(k: usize) -> usize {
    k.div_ceil(2)
}

/// A `[k, n]` row-major f32 matrix as `[pairs(k), n]` bf16 pairs.
pub fn pack_rhs(rhs: &[f32], k: usize, n: usize) -> Vec<u32> {
    let mut out = vec![0u32; pairs(k) * n];
    for row in 0..k {
        for col in 0..n {
            let h = u32::from(to_bf16(rhs[row * n + col]));
            out[(row / 2) * n + col] |= if row.is_multiple_of(2) { h } else { h << 16 };
        }
    }
    out
}

/// `out[m x n] = lhs[m x pairs] * rhs[pairs x n]` (row-major; `n` a
/// multiple of 16). Call only where [`supported`].
pub fn matmul(out: &mut [f32], lhs: &[u32], rhs: &[u32], m: usize, k2: usize, n: usize) {
    assert!(n.is_multiple_of(16) && out.len() >= m * n && lhs.len() >= m * k2 && rhs.len() >= k2 * n);
    assert!(supported(), "AVX-512 BF16 matrix product on a CPU without it");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has the instructions (asserted), and the slices hold
    // the matrices the sizes describe (asserted).
    unsafe {
        x86::matmul(out, lhs, rhs, m, k2, n)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Rows of a register block: 8 rows by up to 3 vectors of 16 columns
    /// is 24 accumulators of the 32 registers.
    const ROWS: usize = 8;

    /// Rounds the whole vectors of 16 of `src` into `dst` (of the same
    /// length); returns how many it did.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub unsafe fn round(src: &[f32], dst: &mut [u16]) -> usize {
        let whole = src.len() / 16 * 16;
        for i in (0..whole).step_by(16) {
            // SAFETY: i + 16 <= whole <= the length of both slices.
            unsafe {
                let x = _mm512_loadu_ps(src.as_ptr().add(i));
                let h = _mm512_cvtneps_pbh(x);
                _mm256_storeu_si256(dst.as_mut_ptr().add(i).cast(), std::mem::transmute::<__m256bh, __m256i>(h));
            }
        }
        whole
    }

    #[target_feature(enable = "avx512f,avx512bf16")]
    pub unsafe fn matmul(out: &mut [f32], lhs: &[u32], rhs: &[u32], m: usize, k2: usize, n: usize) {
        let mut c = 0;
        while c < n {
            let vectors = ((n - c) / 16).min(3);
            let mut r = 0;
            while r + ROWS <= m {
                // SAFETY: rows r..r + ROWS and columns c..c + 16 * vectors
                // are inside the matrices (the caller checked the sizes).
                unsafe {
                    match vectors {
                        3 => block::<3, ROWS>(out, lhs, rhs, r, c, k2, n),
                        2 => block::<2, ROWS>(out, lhs, rhs, r, c, k2, n),
                        _ => block::<1, ROWS>(out, lhs, rhs, r, c, k2, n),
                    }
                }
                r += ROWS;
            }
            while r < m {
                // SAFETY: as above, one row.
                unsafe {
                    match vectors {
                        3 => block::<3, 1>(out, lhs, rhs, r, c, k2, n),
                        2 => block::<2, 1>(out, lhs, rhs, r, c, k2, n),
                        _ => block::<1, 1>(out, lhs, rhs, r, c, k2, n),
                    }
                }
                r += 1;
            }
            c += 16 * vectors;
        }
    }

    /// `R` rows from `r` by `V` vectors of columns from `c`.
    #[target_feature(enable = "avx512f,avx512bf16")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn block<const V: usize, const R: usize>(
        out: &mut [f32],
        lhs: &[u32],
        rhs: &[u32],
        r: usize,
        c: usize,
        k2: usize,
        n: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        let (a, b) = (lhs.as_ptr(), rhs.as_ptr());
        for p in 0..k2 {
            // SAFETY: p < k2 and the columns are inside rhs's rows of n.
            let bv: [__m512bh; V] = std::array::from_fn(|v| unsafe {
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(b.add(p * n + c + 16 * v).cast()))
            });
            for (i, row) in acc.iter_mut().enumerate() {
                // SAFETY: row r + i < m and p < k2.
                let pair = unsafe { *a.add((r + i) * k2 + p) };
                // SAFETY: both are 64-byte vectors of plain bits.
                let av = unsafe { std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(pair as i32)) };
                for v in 0..V {
                    row[v] = _mm512_dpbf16_ps(row[v], av, bv[v]);
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            for (v, &x) in row.iter().enumerate() {
                // SAFETY: row r + i < m, columns inside out's rows of n.
                unsafe { _mm512_storeu_ps(out.as_mut_ptr().add((r + i) * n + c + 16 * v), x) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_a_slice_rounds_each_as_to_bf16() {
        let src: Vec<f32> = (0..37)
            .map(|i| match i {
                3 => f32::NAN,
                5 => 1.0 + 1.0 / 256.0,
                7 => -0.0,
                _ => ((i * 7919 % 1013) as f32 - 500.0) / 7.3,
            })
            .collect();
        let mut dst = vec![0u16; src.len()];
        round(&src, &mut dst);
        for (i, (&x, &h)) in src.iter().zip(&dst).enumerate() {
            if x.is_nan() {
                assert!(from_bf16(h).is_nan(), "{i}");
            } else {
                assert_eq!(h, to_bf16(x), "{i}: {x}");
            }
        }
    }

    #[test]
    fn rounding_to_bf16_is_to_the_nearest() {
        assert_eq!(from_bf16(to_bf16(1.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(-2.5)), -2.5);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
        assert_eq!(from_bf16(to_bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(1.0 + 3.0 / 512.0)), 1.0 + 1.0 / 128.0);
        assert!(from_bf16(to_bf16(f32::NAN)).is_nan());
    }

    #[test]
    fn the_product_matches_f32_on_bf16_inputs() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        let (m, k, n) = (19, 27, 48);
        let value = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 16.0;
        let lhs_f: Vec<f32> = (0..m * k).map(value).collect();
        let rhs_f: Vec<f32> = (0..k * n).map(|i| value(i + 7)).collect();
        let mut lhs = vec![0u32; m * pairs(k)];
        for r in 0..m {
            for e in 0..k {
                put(&mut lhs[r * pairs(k)..(r + 1) * pairs(k)], e, lhs_f[r * k + e]);
            }
        }
        let rhs = pack_rhs(&rhs_f, k, n);
        let mut out = vec![0.0; m * n];
        matmul(&mut out, &lhs, &rhs, m, pairs(k), n);
        for r in 0..m {
            for c in 0..n {
                let want: f32 =
                    (0..k).map(|e| from_bf16(to_bf16(lhs_f[r * k + e])) * from_bf16(to_bf16(rhs_f[e * n + c]))).sum();
                assert!((out[r * n + c] - want).abs() < 1e-3, "({r}, {c}): {} vs {want}", out[r * n + c]);
            }
        }
    }
}
