//! The mix: each terminal deals its transactions from a shuffled deck of
//! 23 cards, 10 New-Order, 10 Payment and one each of Order-Status,
//! Delivery and Stock-Level (clause 5.2.4.2's example), reshuffled when
//! used up. Every 23 transactions hold the mix exactly: 43.5% New-Order,
//! 43.5% Payment (at least 43%), 4.3% of each other one (at least 4%).

use super::TxKind;
use super::random::TpccRand;

pub const CARDS: [(TxKind, usize); 5] = [
    (TxKind::NewOrder, 10),
    (TxKind::Payment, 10),
    (TxKind::OrderStatus, 1),
    (TxKind::Delivery, 1),
    (TxKind::StockLevel, 1),
];

pub struct Deck {
    cards: Vec<TxKind>,
    next: usize,
}

impl Deck {
    pub fn new() -> Deck {
        let cards = CARDS
            .iter()
            .flat_map(|&(k, n)| std::iter::repeat_n(k, n))
            .collect::<Vec<_>>();
        let next = cards.len();
        Deck { cards, next }
    }

    /// The next card, reshuffling the deck when it is used up.
    pub fn draw(&mut self, r: &mut TpccRand) -> TxKind {
        if self.next == self.cards.len() {
            r.shuffle(&mut self.cards);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

impl Default for Deck {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_deck_holds_the_mix() {
        let mut r = TpccRand::new(5);
        let mut d = Deck::new();
        for _ in 0..100 {
            let mut n = [0usize; 5];
            for _ in 0..23 {
                n[d.draw(&mut r) as usize] += 1;
            }
            assert_eq!(n, [10, 10, 1, 1, 1]);
        }
    }

    #[test]
    fn decks_are_shuffled() {
        let mut r = TpccRand::new(5);
        let mut d = Deck::new();
        let a: Vec<_> = (0..23).map(|_| d.draw(&mut r)).collect();
        let b: Vec<_> = (0..23).map(|_| d.draw(&mut r)).collect();
        assert_ne!(a, b);
    }
}
