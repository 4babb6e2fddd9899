//! Which family reads which `model_type`: the one list of what headmap supports, each entry a
//! family's loader. Only `hf` looks here; no family does.

use super::config::Loading;
use super::families::{bart, bert, distilbert, electra, gpt2, gpt_neo, gpt_neox, llama, roberta, t5};
use super::network::Loaded;
use crate::error::Result;

/// A family's loader: its config read and checked, its weights read into a network.
pub(crate) type Loader = fn(Loading<'_>) -> Result<Loaded>;

/// Every `model_type` headmap reads and its family's loader, in the README's order.
const FAMILIES: [(&[&str], Loader); 10] = [
    (&["bert"], bert::load),
    (&["roberta", "xlm-roberta"], roberta::load),
    (&["distilbert"], distilbert::load),
    (&["electra"], electra::load),
    (&["gpt2"], gpt2::load),
    (&["gpt_neo"], gpt_neo::load),
    (&["gpt_neox"], gpt_neox::load),
    (&["llama", "qwen2", "mistral"], llama::load),
    (&["bart", "marian"], bart::load),
    (&["t5"], t5::load),
];

/// The `model_type`s headmap reads.
pub fn model_types() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|(types, _)| types.iter().copied())
}

/// The loader of `model_type`'s family, if headmap reads it.
pub(crate) fn loader(model_type: &str) -> Option<Loader> {
    FAMILIES.iter().find(|(types, _)| types.contains(&model_type)).map(|(_, load)| *load)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `model_type`s in backticks in the first column of the README's family table.
    fn readme_model_types() -> Vec<&'static str> {
        let readme = include_str!("../../README.md");
        let table = readme.lines().skip_while(|l| !l.starts_with("| family (`model_type`)")).skip(2);
        table
            .take_while(|l| l.starts_with('|'))
            .flat_map(|row| row.split('|').nth(1).unwrap_or("").split('`').skip(1).step_by(2))
            .collect()
    }

    #[test]
    fn the_readme_table_names_exactly_the_registered_model_types() {
        let listed = readme_model_types();
        assert!(listed.len() >= 14, "the README's family table was not found: {listed:?}");
        assert_eq!(listed, model_types().collect::<Vec<_>>(), "README table against the registry");
    }

    #[test]
    fn every_model_type_has_one_loader() {
        let types: Vec<&str> = model_types().collect();
        for t in &types {
            assert!(loader(t).is_some(), "{t}");
            assert_eq!(types.iter().filter(|u| *u == t).count(), 1, "{t} registered twice");
        }
        assert!(loader("mbart").is_none());
    }
}
