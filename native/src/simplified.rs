//! CJK characters in their Simplified form (scorers/cjk_simplified.py hands OpenCC's t2s character mappings): the
//! judge's analysis and the lexical units read a Traditional text as its Simplified twin, so that the two scripts
//! share terms. A table by code point over the CJK blocks, read once a character while scanning: no text is
//! converted in Python.
use crate::lexical::is_cjk;

const FIRST: u32 = 0x3400; // the CJK blocks that is_cjk reads: U+3400 to U+FAFF
const LAST: u32 = 0xfaff;

/// Each CJK character's Simplified form (0: itself); both ends in the blocks, so a folded run stays a CJK run.
pub struct Simplified(Box<[u16]>);

impl Simplified {
    pub fn new(pairs: impl IntoIterator<Item = (char, char)>) -> Self {
        let mut table = vec![0u16; (LAST - FIRST + 1) as usize].into_boxed_slice();
        for (from, to) in pairs {
            if is_cjk(from) && is_cjk(to) && from != to {
                table[(from as u32 - FIRST) as usize] = to as u32 as u16; // in the BMP: fits
            }
        }
        Simplified(table)
    }

    /// `c`'s Simplified form, `c` itself when it has none.
    #[inline]
    pub fn of(&self, c: char) -> char {
        let code = c as u32;
        if !(FIRST..=LAST).contains(&code) {
            return c;
        }
        match self.0[(code - FIRST) as usize] {
            0 => c,
            to => char::from_u32(u32::from(to)).unwrap_or(c),
        }
    }

    /// `text` in Simplified characters; None when it has none to fold (most texts: no copy).
    pub fn text(&self, text: &str) -> Option<String> {
        text.chars().any(|c| self.of(c) != c).then(|| text.chars().map(|c| self.of(c)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_the_mapped_cjk_characters_only() {
        let simplified = Simplified::new([('國', '国'), ('們', '们'), ('a', 'b'), ('㑮', '\u{2b748}')]);
        assert_eq!(simplified.text("我們的國家").as_deref(), Some("我们的国家"));
        assert_eq!(simplified.text("我们 abc"), None);
        assert_eq!(simplified.of('a'), 'a'); // not CJK: never folded
        assert_eq!(simplified.of('㑮'), '㑮'); // its form lies outside the blocks: kept
    }
}
