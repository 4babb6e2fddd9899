//! A SentencePiece character map (`precompiled_charsmap`, in a Marian `.spm` or a T5/XLM-R
//! `tokenizer.json`) checked before the `tokenizers` crate gets it. Its reader trusts the file:
//! a damaged trie makes it index past its arrays and panic at the first sentence instead of
//! refusing the file. This walks every path a sentence can take through the trie, as
//! `spm_precompiled::DoubleArray::common_prefix_search` does, and checks each step and each
//! replacement it points to.
//!
//! The map is a little-endian u32 byte count of the trie, the trie's u32 units (a darts-clone
//! double array), then the replacements: UTF-8 strings, each ended by a NUL byte.

/// Longest key the reader looks up: it looks up graphemes of up to 5 bytes, else single chars.
const MAX_KEY: usize = 5;

/// Fails, saying what is wrong, unless every lookup in `charsmap` stays in bounds.
pub fn check(charsmap: &[u8]) -> Result<(), &'static str> {
    let size = charsmap.get(..4).ok_or("it is shorter than its header")?;
    let trie_bytes = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize / 4 * 4;
    let rest = &charsmap[4..];
    if trie_bytes > rest.len() {
        return Err("its trie is longer than the file");
    }
    let units: Vec<usize> =
        rest[..trie_bytes].chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize).collect();
    let normalized = std::str::from_utf8(&rest[trie_bytes..]).map_err(|_| "its replacements are not UTF-8")?;
    let root = *units.first().ok_or("its trie is empty")?;
    walk(&units, normalized, offset(root), 0)
}

/// The most characters one replacement of a checked `charsmap` holds (1 for none): what one
/// looked-up key, a character or more, can become.
pub fn longest_replacement(charsmap: &[u8]) -> usize {
    let trie_bytes = charsmap.get(..4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize / 4 * 4);
    let replacements = charsmap.get(4 + trie_bytes..).unwrap_or(&[]);
    let longest = replacements.split(|&b| b == 0).map(|r| String::from_utf8_lossy(r).chars().count()).max();
    longest.unwrap_or(0).max(1)
}

fn has_leaf(unit: usize) -> bool {
    (unit >> 8) & 1 == 1
}

fn value(unit: usize) -> usize {
    unit & ((1 << 31) - 1)
}

fn label(unit: usize) -> usize {
    unit & ((1 << 31) | 0xFF)
}

fn offset(unit: usize) -> usize {
    (unit >> 10) << ((unit & (1 << 9)) >> 6)
}

/// Every step from node `pos` at key length `depth`: the reader reads `units[pos ^ c]` for any
/// next byte `c` of a sentence, so all 255 must be there; an edge it follows may end in a
/// replacement, which must be a whole UTF-8 string of `normalized`.
fn walk(units: &[usize], normalized: &str, pos: usize, depth: usize) -> Result<(), &'static str> {
    if depth == MAX_KEY {
        return Ok(());
    }
    if (pos | 0xFF) >= units.len() {
        return Err("its trie points outside itself");
    }
    for c in 1..=0xFFusize {
        let unit = units[pos ^ c];
        if label(unit) != c {
            continue;
        }
        let next = pos ^ c ^ offset(unit);
        if has_leaf(unit) {
            let start = value(*units.get(next).ok_or("its trie points outside itself")?);
            let end = normalized
                .as_bytes()
                .get(start..)
                .ok_or("a replacement starts past the end")?
                .iter()
                .position(|&b| b == 0);
            let end = end.map_or(normalized.len(), |n| start + n);
            if !normalized.is_char_boundary(start) || !normalized.is_char_boundary(end) {
                return Err("a replacement starts or ends inside a character");
            }
        }
        walk(units, normalized, next, depth + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-entry map: the byte `a` (0x61) is replaced by "b".
    fn tiny() -> Vec<u8> {
        // darts-clone units in one block of 256: root at 0 with offset 0x100 ^ 0 = children at
        // 0x100 ^ c — kept within one block by making the root's offset 0 and the block 512
        let mut units = vec![0usize; 512];
        units[0] = 0; // root: offset 0, so a child for byte c is unit c
        units[0x61] = 0x61 | (1 << 8) | (0x100 << 10); // label 'a', has a leaf, offset 0x100
        units[0x61 ^ 0x100] = 0; // the leaf's value: replacement at byte 0
        let mut bytes = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for u in units {
            bytes.extend((u as u32).to_le_bytes());
        }
        bytes.extend(b"b\0");
        bytes
    }

    #[test]
    fn a_whole_map_passes() {
        assert_eq!(check(&tiny()), Ok(()));
        assert_eq!(longest_replacement(&tiny()), 1);
        let mut longer = tiny();
        longer.truncate(longer.len() - 2);
        longer.extend("ﷺ 가나다\0b\0".as_bytes());
        assert_eq!(longest_replacement(&longer), 5);
    }

    #[test]
    fn damage_is_refused_not_panicked_on() {
        assert!(check(&[1, 0]).is_err(), "shorter than its header");
        let mut long = tiny();
        long[..4].copy_from_slice(&100_000u32.to_le_bytes());
        assert_eq!(check(&long), Err("its trie is longer than the file"));
        let mut outside = tiny();
        let at = 4 + 4 * (0x61 ^ 0x100);
        outside[at..at + 4].copy_from_slice(&9_999u32.to_le_bytes());
        assert_eq!(check(&outside), Err("a replacement starts past the end"));
        let mut far = tiny();
        far[4..8].copy_from_slice(&(0x4000u32 << 10).to_le_bytes());
        assert_eq!(check(&far), Err("its trie points outside itself"));
    }
}
