//! Tables derived at compile time from the [`VariantSpec`]s and the board
//! geometry: leaper attacks, slider rays, lines, zones and the masks the
//! move generator reads instead of rule flags.

use super::piece::{MAX_KINDS, Movement};
use super::variant::{PromotionRule, VariantSpec};
use super::{Bitboard, Color, Geometry, NUM_SQUARES, Square, Variant};

/// The eight slide directions as (file, rank) deltas. The first four
/// increase the square index (scan from the low end), the last four
/// decrease it (scan from the high end).
const DIRECTIONS: [(i32, i32); 8] = [(0, 1), (1, 0), (1, 1), (1, -1), (0, -1), (-1, 0), (-1, -1), (-1, 1)];
/// Index into [`DIRECTIONS`] of the orthogonal and diagonal directions.
const ROOK_DIRS: [usize; 4] = [0, 1, 4, 5];
const BISHOP_DIRS: [usize; 4] = [2, 3, 6, 7];

const fn sq_bit(file: i32, rank: i32) -> u128 {
    1u128 << ((file - 1) * 9 + rank)
}

/// Rays of one board geometry: `ray[d][sq]` = the squares from `sq`
/// (exclusive) to the board edge in direction `d`.
pub struct Rays {
    ray: [[Bitboard; NUM_SQUARES]; 8],
    /// Empty-board rook and bishop attacks, for pin detection.
    rook_empty: [Bitboard; NUM_SQUARES],
    bishop_empty: [Bitboard; NUM_SQUARES],
}

const fn build_rays(g: Geometry) -> Rays {
    let mut rays = Rays {
        ray: [[Bitboard::EMPTY; NUM_SQUARES]; 8],
        rook_empty: [Bitboard::EMPTY; NUM_SQUARES],
        bishop_empty: [Bitboard::EMPTY; NUM_SQUARES],
    };
    let mut s = 0;
    while s < NUM_SQUARES {
        let (f0, r0) = ((s / 9) as i32 + 1, (s % 9) as i32);
        if g.contains(f0, r0) {
            let mut d = 0;
            while d < 8 {
                let (df, dr) = DIRECTIONS[d];
                let (mut f, mut r) = (f0 + df, r0 + dr);
                let mut bits = 0u128;
                while g.contains(f, r) {
                    bits |= sq_bit(f, r);
                    f += df;
                    r += dr;
                }
                rays.ray[d][s] = Bitboard(bits);
                if d % 4 < 2 {
                    rays.rook_empty[s] = Bitboard(rays.rook_empty[s].0 | bits);
                } else {
                    rays.bishop_empty[s] = Bitboard(rays.bishop_empty[s].0 | bits);
                }
                d += 1;
            }
        }
        s += 1;
    }
    rays
}

static RAYS_NINE: Rays = build_rays(Geometry::NINE);
static RAYS_FIVE: Rays = build_rays(Geometry::FIVE);

impl Rays {
    #[inline]
    fn slide(&self, dirs: [usize; 4], sq: Square, occ: Bitboard) -> Bitboard {
        let s = sq.index();
        let mut att = 0u128;
        // The first two directions of each set increase the index.
        for (i, &d) in dirs.iter().enumerate() {
            let ray = self.ray[d][s].0;
            let blockers = ray & occ.0;
            att |= if blockers == 0 {
                ray
            } else if i < 2 {
                ray ^ self.ray[d][blockers.trailing_zeros() as usize].0
            } else {
                ray ^ self.ray[d][127 - blockers.leading_zeros() as usize].0
            };
        }
        Bitboard(att)
    }

    /// Rook attacks from `sq` with blockers `occ` (blockers included).
    #[inline]
    pub fn rook(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.slide(ROOK_DIRS, sq, occ)
    }

    /// Bishop attacks from `sq` with blockers `occ` (blockers included).
    #[inline]
    pub fn bishop(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.slide(BISHOP_DIRS, sq, occ)
    }

    #[inline]
    pub fn rook_empty(&self, sq: Square) -> Bitboard {
        self.rook_empty[sq.index()]
    }

    #[inline]
    pub fn bishop_empty(&self, sq: Square) -> Bitboard {
        self.bishop_empty[sq.index()]
    }
}

/// `between[a][b]`: squares strictly between two squares on one line.
struct Lines {
    between: [[Bitboard; NUM_SQUARES]; NUM_SQUARES],
}

const fn build_lines() -> Lines {
    let mut t = Lines { between: [[Bitboard::EMPTY; NUM_SQUARES]; NUM_SQUARES] };
    let g = Geometry::NINE;
    let mut a = 0;
    while a < NUM_SQUARES {
        let (fa, ra) = ((a / 9) as i32 + 1, (a % 9) as i32);
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRECTIONS[d];
            let mut between = 0u128;
            let (mut f, mut r) = (fa + df, ra + dr);
            while g.contains(f, r) {
                let b = ((f - 1) * 9 + r) as usize;
                t.between[a][b] = Bitboard(between);
                between |= sq_bit(f, r);
                f += df;
                r += dr;
            }
            d += 1;
        }
        a += 1;
    }
    t
}

static LINES: Lines = build_lines();

/// Squares strictly between `a` and `b` if they share a rank, file or
/// diagonal; empty otherwise.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    LINES.between[a.index()][b.index()]
}

/// What the move generator needs to know about one variant.
pub struct VariantTables {
    pub spec: &'static VariantSpec,
    pub num_kinds: usize,
    pub hand_kinds: usize,
    /// All squares of the board.
    pub board: Bitboard,
    /// `leaps[kind][color][sq]`: squares the piece attacks by leaps/steps.
    pub leaps: [[[Bitboard; NUM_SQUARES]; 2]; MAX_KINDS],
    /// Bit k set: kind k slides like a rook / like a bishop.
    pub rook_kinds: u32,
    pub bishop_kinds: u32,
    /// Bit k set: kind k has leaps or steps.
    pub leaper_kinds: u32,
    /// Kind each kind promotes to (unpromoted kinds), or `NONE`.
    pub promotes_to: [u8; MAX_KINDS],
    /// Kind a captured piece of each kind goes to hand as.
    pub in_hand_as: [u8; MAX_KINDS],
    pub king: u8,
    pub pawn: u8,
    /// Promotion zone per colour.
    pub zone: [Bitboard; 2],
    /// Each colour's far rank (campmate target).
    pub far_rank: [Bitboard; 2],
    /// `must_promote[kind][color]`: destination squares where a
    /// promotion-eligible move of this kind must promote (all squares under
    /// mandatory promotion; else the squares where it could never move).
    pub must_promote: [[Bitboard; 2]; MAX_KINDS],
    /// `drop_to[kind][color]`: squares a dropped piece may land on (before
    /// occupancy and the two-pawn rule): not where it could never move.
    pub drop_to: [[Bitboard; 2]; MAX_KINDS],
    /// File masks of the board, indexed by file number 1..=9 (0 unused).
    pub files: [Bitboard; 10],
    rays: &'static Rays,
}

/// Marks "no such kind" in the `u8` kind tables.
pub const NONE: u8 = u8::MAX;

const fn build(spec: &'static VariantSpec, rays: &'static Rays) -> VariantTables {
    let mut t = VariantTables {
        spec,
        num_kinds: spec.pieces.len(),
        hand_kinds: spec.hand_kinds as usize,
        board: Bitboard::EMPTY,
        leaps: [[[Bitboard::EMPTY; NUM_SQUARES]; 2]; MAX_KINDS],
        rook_kinds: 0,
        bishop_kinds: 0,
        leaper_kinds: 0,
        promotes_to: [NONE; MAX_KINDS],
        in_hand_as: [NONE; MAX_KINDS],
        king: NONE,
        pawn: spec.pawn,
        zone: [Bitboard::EMPTY; 2],
        far_rank: [Bitboard::EMPTY; 2],
        must_promote: [[Bitboard::EMPTY; 2]; MAX_KINDS],
        drop_to: [[Bitboard::EMPTY; 2]; MAX_KINDS],
        files: [Bitboard::EMPTY; 10],
        rays,
    };
    assert!(spec.pieces.len() <= MAX_KINDS, "too many piece kinds");
    build_squares(&mut t);
    let mut k = 0;
    while k < spec.pieces.len() {
        build_kind(&mut t, k);
        k += 1;
    }
    assert!(t.king != NONE, "variant without a king");
    t
}

/// The board, its files, and each colour's promotion zone and far rank.
const fn build_squares(t: &mut VariantTables) {
    let (g, spec) = (t.spec.geometry, t.spec);
    let mut s = 0;
    while s < NUM_SQUARES {
        let (f, r) = ((s / 9) as i32 + 1, (s % 9) as i32);
        if g.contains(f, r) {
            t.board.0 |= 1 << s;
            t.files[f as usize].0 |= 1 << s;
            let mut c = 0;
            while c < 2 {
                let color = if c == 0 { Color::Sente } else { Color::Gote };
                let depth = g.depth_from_far(color, r as u8);
                if depth < spec.zone_depth {
                    t.zone[c].0 |= 1 << s;
                }
                if depth == 0 {
                    t.far_rank[c].0 |= 1 << s;
                }
                c += 1;
            }
        }
        s += 1;
    }
}

/// Kind `k`'s entries: its sliders and leaps, promotion and hand kinds,
/// and per colour and square its leaps, where it may be dropped and where
/// it must promote.
const fn build_kind(t: &mut VariantTables, k: usize) {
    let spec = t.spec;
    let p = &spec.pieces[k];
    if p.royal {
        t.king = k as u8;
    }
    if p.movement.rook {
        t.rook_kinds |= 1 << k;
    }
    if p.movement.bishop {
        t.bishop_kinds |= 1 << k;
    }
    if !p.movement.leaps.is_empty() {
        t.leaper_kinds |= 1 << k;
    }
    match (p.promoted, p.partner) {
        (false, Some(promoted)) => {
            t.promotes_to[k] = promoted;
            t.in_hand_as[k] = k as u8;
        }
        (true, Some(base)) => t.in_hand_as[k] = base,
        _ => t.in_hand_as[k] = if p.royal { NONE } else { k as u8 },
    }
    let mut c = 0;
    while c < 2 {
        let mut s = 0;
        while s < NUM_SQUARES {
            let (f0, r0) = ((s / 9) as i32 + 1, (s % 9) as i32);
            if spec.geometry.contains(f0, r0) {
                let bits = leaps_from(spec.geometry, &p.movement, c, (f0, r0));
                t.leaps[k][c][s] = Bitboard(bits);
                let slides = p.movement.rook || p.movement.bishop;
                let stuck = bits == 0 && !slides;
                if !stuck {
                    t.drop_to[k][c].0 |= 1 << s;
                }
                let must = match spec.promotion {
                    PromotionRule::Mandatory => true,
                    PromotionRule::Optional => stuck,
                };
                if must {
                    t.must_promote[k][c].0 |= 1 << s;
                }
            }
            s += 1;
        }
        c += 1;
    }
}

/// The squares on the board that a piece of colour `c` (0 sente, 1 gote)
/// on file `f0`, rank `r0` reaches by its leaps and steps.
const fn leaps_from(g: Geometry, movement: &Movement, c: usize, (f0, r0): (i32, i32)) -> u128 {
    // Gote's moves are sente's turned by 180 degrees.
    let (sf, sr) = if c == 0 { (1, -1) } else { (-1, 1) };
    let mut bits = 0u128;
    let mut a = 0;
    while a < movement.leaps.len() {
        let offs = movement.leaps[a].offsets();
        let mut o = 0;
        while o < offs.len() {
            let (df, dr) = offs[o];
            let (f, r) = (f0 + sf * df as i32, r0 + sr * dr as i32);
            if g.contains(f, r) {
                bits |= sq_bit(f, r);
            }
            o += 1;
        }
        a += 1;
    }
    bits
}

#[allow(long_running_const_eval)]
static TABLES: [VariantTables; 4] = [
    build(Variant::Minishogi.spec(), &RAYS_FIVE),
    build(Variant::Mansindam.spec(), &RAYS_NINE),
    build(Variant::Pandemonium.spec(), &RAYS_NINE),
    build(Variant::Pandemonium2022.spec(), &RAYS_NINE),
];

impl Variant {
    /// The derived tables of this variant.
    #[inline]
    pub fn tables(self) -> &'static VariantTables {
        &TABLES[self as usize]
    }
}

impl VariantTables {
    /// Squares attacked by a `kind` piece of `color` on `sq`, with
    /// blockers `occ`.
    #[inline]
    pub fn attacks(&self, kind: u8, color: Color, sq: Square, occ: Bitboard) -> Bitboard {
        let k = kind as usize;
        let mut att = self.leaps[k][color.index()][sq.index()];
        if self.rook_kinds >> k & 1 != 0 {
            att |= self.rays.rook(sq, occ);
        }
        if self.bishop_kinds >> k & 1 != 0 {
            att |= self.rays.bishop(sq, occ);
        }
        att
    }

    #[inline]
    pub fn rook_attacks(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.rays.rook(sq, occ)
    }

    #[inline]
    pub fn bishop_attacks(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.rays.bishop(sq, occ)
    }

    #[inline]
    pub fn rook_empty(&self, sq: Square) -> Bitboard {
        self.rays.rook_empty(sq)
    }

    #[inline]
    pub fn bishop_empty(&self, sq: Square) -> Bitboard {
        self.rays.bishop_empty(sq)
    }

    #[inline]
    pub fn is_promotable(&self, kind: u8) -> bool {
        self.promotes_to[kind as usize] != NONE
    }
}
