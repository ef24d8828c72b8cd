//! The variants as data: one `const` [`VariantSpec`] each.
//!
//! Adding a shogi-like variant means adding a spec here and a row in
//! [`Variant`]; the move generator reads only the tables derived from it
//! (see [`super::tables`]).

use super::Geometry;
use super::piece::{Atom::*, Movement, PieceSpec};

/// How a promotion-eligible move (starting or ending in the zone) promotes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PromotionRule {
    /// The mover chooses, except where the unpromoted piece could never move
    /// again (a pawn on the last rank): there it must promote.
    Optional,
    /// Every eligible move of a promotable piece promotes.
    Mandatory,
}

/// What a repeated position does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Repetition {
    /// The fourth occurrence ends the game: sente loses, unless one side
    /// checked on every move since the first occurrence (that side loses).
    FourfoldFirstPlayerLoses,
    /// The third occurrence ends the game: the side to move loses, unless one
    /// side checked on every move since the first occurrence (that side
    /// loses; both did: draw).
    ThirdSideToMoveLoses,
    /// A move that would make a position occur a third time is illegal.
    ThirdIsIllegal,
}

/// Restrictions on dropping a pawn (the variant's `pawn` kind). Drops on
/// squares where the piece could never move are always forbidden.
#[derive(Copy, Clone, Debug)]
pub struct PawnDropRules {
    /// No pawn drop on a file holding an unpromoted pawn of the same side.
    pub two_pawns: bool,
    /// No pawn drop that checkmates at once (uchifuzume).
    pub no_drop_mate: bool,
}

/// A complete variant definition.
#[derive(Debug)]
pub struct VariantSpec {
    /// The name used on the command line and in `USI_Variant`.
    pub name: &'static str,
    pub geometry: Geometry,
    pub start_sfen: &'static str,
    /// Piece kinds: hand kinds first (SFEN hand order), then the king, then
    /// promoted kinds. Index = [`PieceKind`](super::PieceKind).
    pub pieces: &'static [PieceSpec],
    /// Number of leading kinds that can be held in hand.
    pub hand_kinds: u8,
    /// Index of the pawn kind, whose drops `pawn_drops` restricts.
    pub pawn: u8,
    pub pawn_drops: PawnDropRules,
    /// Promotion zone depth in ranks from the far side.
    pub zone_depth: u8,
    pub promotion: PromotionRule,
    pub repetition: Repetition,
    /// A king that reaches the far rank wins at once.
    pub campmate: bool,
}

/// Gold general: WfF.
const GOLD: &[crate::rules::Atom] = &[W, FF];

pub const MINISHOGI: VariantSpec = VariantSpec {
    name: "minishogi",
    geometry: Geometry::FIVE,
    start_sfen: "rbsgk/4p/5/P4/KGSBR b - 1",
    pieces: &[
        PieceSpec::base("rook", b'R', Movement::rook(&[]), Some(6)),
        PieceSpec::base("bishop", b'B', Movement::bishop(&[]), Some(7)),
        PieceSpec::base("gold", b'G', Movement::leaper(GOLD), None),
        PieceSpec::base("silver", b'S', Movement::leaper(&[F, FW]), Some(8)),
        PieceSpec::base("pawn", b'P', Movement::leaper(&[FW]), Some(9)),
        PieceSpec::king(b'K', &[W, F]),
        PieceSpec::promoted("dragon", b'R', Movement::rook(&[F]), 0),
        PieceSpec::promoted("horse", b'B', Movement::bishop(&[W]), 1),
        PieceSpec::promoted("promoted silver", b'S', Movement::leaper(GOLD), 3),
        PieceSpec::promoted("tokin", b'P', Movement::leaper(GOLD), 4),
    ],
    hand_kinds: 5,
    pawn: 4,
    pawn_drops: PawnDropRules { two_pawns: true, no_drop_mate: true },
    zone_depth: 1,
    promotion: PromotionRule::Optional,
    repetition: Repetition::FourfoldFirstPlayerLoses,
    campmate: false,
};

pub const MANSINDAM: VariantSpec = VariantSpec {
    name: "mansindam",
    geometry: Geometry::NINE,
    start_sfen: "rnbakqcnm/9/ppppppppp/9/9/9/PPPPPPPPP/9/MNCQKABNR b - 1",
    pieces: &[
        PieceSpec::base("angel", b'A', Movement::queen(&[N]), None),
        PieceSpec::base("queen", b'Q', Movement::queen(&[]), None),
        PieceSpec::base("marshal", b'M', Movement::rook(&[N]), Some(9)),
        PieceSpec::base("cardinal", b'C', Movement::bishop(&[N]), Some(10)),
        PieceSpec::base("rook", b'R', Movement::rook(&[]), Some(11)),
        PieceSpec::base("bishop", b'B', Movement::bishop(&[]), Some(12)),
        PieceSpec::base("knight", b'N', Movement::leaper(&[N]), Some(13)),
        PieceSpec::base("pawn", b'P', Movement::leaper(&[FW]), Some(14)),
        PieceSpec::king(b'K', &[W, F]),
        PieceSpec::promoted("ship", b'M', Movement::rook(&[N, F]), 2),
        PieceSpec::promoted("rhino", b'C', Movement::bishop(&[N, W]), 3),
        PieceSpec::promoted("tiger", b'R', Movement::rook(&[F]), 4),
        PieceSpec::promoted("archer", b'B', Movement::bishop(&[W]), 5),
        PieceSpec::promoted("centaur", b'N', Movement::leaper(&[W, F, N]), 6),
        PieceSpec::promoted("guard", b'P', Movement::leaper(&[W, F]), 7),
    ],
    hand_kinds: 8,
    pawn: 7,
    pawn_drops: PawnDropRules { two_pawns: true, no_drop_mate: false },
    zone_depth: 3,
    promotion: PromotionRule::Mandatory,
    repetition: Repetition::ThirdIsIllegal,
    campmate: true,
};

const PANDEMONIUM_PIECES: &[PieceSpec] = &[
    PieceSpec::base("rook", b'R', Movement::rook(&[]), Some(10)),
    PieceSpec::base("bishop", b'B', Movement::bishop(&[]), Some(11)),
    PieceSpec::base("knight", b'N', Movement::leaper(&[N]), Some(12)),
    PieceSpec::base("sage", b'S', Movement::leaper(&[W, F]), Some(13)),
    PieceSpec::base("ferz", b'F', Movement::leaper(&[F]), Some(14)),
    PieceSpec::base("van", b'V', Movement::leaper(&[W]), Some(15)),
    PieceSpec::base("alfil", b'A', Movement::leaper(&[A]), Some(16)),
    PieceSpec::base("bull", b'U', Movement::leaper(&[D]), Some(17)),
    PieceSpec::base("pawn", b'P', Movement::leaper(&[FW, SW]), Some(18)),
    PieceSpec::king(b'K', &[W, F]),
    PieceSpec::promoted("dragon", b'R', Movement::rook(&[F]), 0),
    PieceSpec::promoted("horse", b'B', Movement::bishop(&[W]), 1),
    PieceSpec::promoted("kangaroo", b'N', Movement::leaper(&[N, A]), 2),
    PieceSpec::promoted("hwacha", b'S', Movement::leaper(&[W, F, D]), 3),
    PieceSpec::promoted("queen", b'F', Movement::queen(&[]), 4),
    PieceSpec::promoted("marshal", b'V', Movement::rook(&[N]), 5),
    PieceSpec::promoted("cardinal", b'A', Movement::bishop(&[N]), 6),
    PieceSpec::promoted("centaur", b'U', Movement::leaper(&[W, F, N]), 7),
    PieceSpec::promoted("guard", b'P', Movement::leaper(&[W, F]), 8),
];

pub const PANDEMONIUM: VariantSpec = VariantSpec {
    name: "pandemonium",
    geometry: Geometry::NINE,
    start_sfen: "rnbsksbnr/2+f1+u1+a2/p1p1p1p1p/4v4/9/4V4/P1P1P1P1P/2+F1+U1+A2/RNBSKSBNR b - 1",
    pieces: PANDEMONIUM_PIECES,
    hand_kinds: 9,
    pawn: 8,
    pawn_drops: PawnDropRules { two_pawns: false, no_drop_mate: false },
    zone_depth: 3,
    promotion: PromotionRule::Optional,
    repetition: Repetition::ThirdSideToMoveLoses,
    campmate: false,
};

pub const PANDEMONIUM2022: VariantSpec = VariantSpec {
    name: "pandemonium2022",
    start_sfen: "rnbsksbnr/2a1f1u2/p1p1p1p1p/4v4/9/4V4/P1P1P1P1P/2U1F1A2/RNBSKSBNR b - 1",
    campmate: true,
    ..PANDEMONIUM
};

/// The variants Pantheon plays.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    Minishogi = 0,
    Mansindam = 1,
    Pandemonium = 2,
    Pandemonium2022 = 3,
}

impl Variant {
    pub const ALL: [Variant; 4] =
        [Variant::Minishogi, Variant::Mansindam, Variant::Pandemonium, Variant::Pandemonium2022];

    pub const fn spec(self) -> &'static VariantSpec {
        match self {
            Variant::Minishogi => &MINISHOGI,
            Variant::Mansindam => &MANSINDAM,
            Variant::Pandemonium => &PANDEMONIUM,
            Variant::Pandemonium2022 => &PANDEMONIUM2022,
        }
    }

    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    pub const fn geometry(self) -> Geometry {
        self.spec().geometry
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown variant name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{0}' (expected one of: minishogi, mansindam, pandemonium, pandemonium2022)")]
pub struct UnknownVariant(pub String);

impl std::str::FromStr for Variant {
    type Err = UnknownVariant;

    /// Case-insensitive variant name.
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownVariant(s.to_string()))
    }
}
