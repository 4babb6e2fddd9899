//! One head's heatmap as an SVG document, for the command line and for figures in pages
//! read without JavaScript. Drawn like the explorer: viridis cells, masked cells hatched,
//! PAD query rows faded, token labels on both axes.

use std::fmt::Write;

use ndarray::ArrayView2;

/// Viridis at t = 0, 0.1, …, 1, the explorer's colour map.
const VIRIDIS: [[u8; 3]; 11] = [
    [68, 1, 84],
    [72, 36, 117],
    [65, 68, 135],
    [53, 95, 141],
    [42, 120, 142],
    [33, 145, 140],
    [34, 168, 132],
    [68, 191, 112],
    [122, 209, 81],
    [189, 223, 38],
    [253, 231, 37],
];

/// `rgb(…)` of `t` in [0, 1] on viridis.
pub fn viridis(t: f32) -> [u8; 3] {
    let x = t.clamp(0.0, 1.0) * 10.0;
    let k = (x.floor() as usize).min(9);
    let f = x - k as f32;
    let mix = |c: usize| (f32::from(VIRIDIS[k][c]) * (1.0 - f) + f32::from(VIRIDIS[k + 1][c]) * f).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// What one heatmap shows.
pub struct Heatmap<'a> {
    pub title: &'a str,
    pub weights: ArrayView2<'a, f32>, // (Tq, Tk)
    pub queries: &'a [String],
    pub keys: &'a [String],
    /// (Tq, Tk), false where the mask hides a key; `None` for no mask.
    pub allowed: Option<ArrayView2<'a, bool>>,
    pub query_valid: &'a [bool],
}

fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c if c.is_control() => "\u{fffd}".to_string(),
            c => c.to_string(),
        })
        .collect()
}

fn short(label: &str, max: usize) -> String {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= max {
        label.to_string()
    } else {
        chars[..max - 1].iter().collect::<String>() + "…"
    }
}

/// The SVG text of `map`; colours run from 0 to the largest weight shown.
pub fn heatmap_svg(map: &Heatmap) -> String {
    let (tq, tk) = map.weights.dim();
    let font = 12.0;
    let cell = (720.0 / tq.max(tk) as f32).clamp(3.0, 36.0);
    let step = if cell >= font * 1.2 { 1 } else { (font * 1.2 / cell).ceil() as usize };
    let widest = |labels: &[String]| labels.iter().map(|l| short(l, 14).chars().count()).max().unwrap_or(1) as f32;
    let left = widest(map.queries) * font * 0.75 + 14.0;
    let top = widest(map.keys) * font * 0.65 + 40.0;
    let (width, height) = (left + cell * tk as f32 + 30.0, top + cell * tq as f32 + 70.0);
    let max = map.weights.iter().copied().fold(0.0f32, f32::max).max(f32::MIN_POSITIVE);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" shape-rendering="crispEdges" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="Noto Sans CJK KR, Noto Sans KR, Noto Sans, sans-serif" font-size="{font}">
<defs><pattern id="masked" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="#ececec"/><rect width="2" height="7" fill="#969696"/></pattern></defs>
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="10" y="20" font-size="14" font-weight="600">{}</text>
"##,
        escape(map.title)
    );
    for i in 0..tq {
        for j in 0..tk {
            let (x, y) = (left + j as f32 * cell, top + i as f32 * cell);
            let visible = map.allowed.is_none_or(|a| a[[i, j]]);
            let fill = if visible {
                let [r, g, b] = viridis(map.weights[[i, j]] / max);
                format!("rgb({r},{g},{b})")
            } else {
                "url(#masked)".to_string()
            };
            let fade = if map.query_valid.get(i) == Some(&false) { r#" fill-opacity="0.4""# } else { "" };
            let _ = writeln!(
                s,
                r#"<rect x="{x:.2}" y="{y:.2}" width="{cell:.2}" height="{cell:.2}" fill="{fill}"{fade}><title>{:.4}</title></rect>"#,
                map.weights[[i, j]]
            );
        }
    }
    for (i, label) in map.queries.iter().enumerate().step_by(step) {
        let y = top + (i as f32 + 0.5) * cell;
        let _ = writeln!(
            s,
            r#"<text x="{:.2}" y="{y:.2}" text-anchor="end" dominant-baseline="middle">{}</text>"#,
            left - 6.0,
            escape(&short(label, 14))
        );
    }
    for (j, label) in map.keys.iter().enumerate().step_by(step) {
        let x = left + (j as f32 + 0.5) * cell;
        let _ = writeln!(
            s,
            r#"<text transform="translate({x:.2},{:.2}) rotate(-60)">{}</text>"#,
            top - 6.0,
            escape(&short(label, 14))
        );
    }
    // legend: 0 … max
    let (lx, ly) = (left, top + cell * tq as f32 + 24.0);
    for k in 0..50 {
        let [r, g, b] = viridis(k as f32 / 49.0);
        let _ = writeln!(
            s,
            r#"<rect x="{:.1}" y="{ly:.1}" width="4.2" height="10" fill="rgb({r},{g},{b})"/>"#,
            lx + k as f32 * 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{lx:.1}" y="{:.1}">0</text><text x="{:.1}" y="{:.1}" text-anchor="end">{max:.3}</text>"#,
        ly + 24.0,
        lx + 200.0,
        ly + 24.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{:.1}" y="{ly:.1}" width="14" height="10" fill="url(#masked)"/><text x="{:.1}" y="{:.1}">masked</text>"##,
        lx + 220.0,
        lx + 238.0,
        ly + 9.0
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn labels_are_escaped_and_masked_cells_hatched() {
        let w = array![[1.0f32, 0.0], [0.4, 0.6]];
        let allowed = array![[true, false], [true, true]];
        let tokens = vec!["<b>".to_string(), "동물이".to_string()];
        let svg = heatmap_svg(&Heatmap {
            title: "a & b",
            weights: w.view(),
            queries: &tokens,
            keys: &tokens,
            allowed: Some(allowed.view()),
            query_valid: &[true, true],
        });
        assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
        assert!(svg.contains("동물이"));
        assert!(svg.contains("a &amp; b"));
        assert_eq!(svg.matches(r#"fill="url(#masked)""#).count(), 2, "one masked cell and the legend swatch");
        assert_eq!(viridis(0.0), [68, 1, 84]);
        assert_eq!(viridis(1.0), [253, 231, 37]);
    }
}
