//! A game as text: a start position (SFEN or `startpos`) and the USI moves
//! played from it, as `position` commands and the command line give them.

use super::sfen::{SfenError, parse_position};
use super::usi_move::{ParseMoveError, UsiMove};
use crate::rules::{Game, Variant};

/// Why a start position and its moves do not make a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameTextError {
    #[error("bad sfen '{sfen}': {source}")]
    Sfen { sfen: String, source: SfenError },
    /// A move after the game had ended (1-based move number).
    #[error("move {number} ({text}): the game is already over ({outcome})")]
    Over { number: usize, text: String, outcome: String },
    /// A move that is malformed or illegal (1-based move number).
    #[error("move {number}: {source}")]
    Move { number: usize, source: ParseMoveError },
}

/// The game from `sfen` after `moves`, each checked against the legal
/// moves of the game so far (history rules included).
pub fn parse_game(variant: Variant, sfen: &str, moves: &[String]) -> Result<Game, GameTextError> {
    let start = parse_position(variant, sfen).map_err(|source| GameTextError::Sfen { sfen: sfen.into(), source })?;
    let mut game = Game::new(start);
    for (i, text) in moves.iter().enumerate() {
        let number = i + 1;
        if let Some(outcome) = game.outcome() {
            return Err(GameTextError::Over { number, text: text.clone(), outcome: outcome.to_string() });
        }
        let mv = UsiMove::parse(text, variant.geometry())
            .map_err(ParseMoveError::from)
            .and_then(|usi| usi.to_game_move(&game).map_err(ParseMoveError::from))
            .map_err(|source| GameTextError::Move { number, source })?;
        game.play(mv);
    }
    Ok(game)
}
