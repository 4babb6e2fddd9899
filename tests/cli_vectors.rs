//! `headmap vectors`: each token's query and key vectors, their joint embedding and PCA points.
#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use cli_common::{fixture, headmap, json_of};

/// `headmap vectors --model <fixture> …`.
fn vectors(model: &str, args: &[&str]) -> (bool, Vec<u8>, String) {
    headmap(&[&["vectors", "--model", &fixture(model)][..], args].concat())
}

fn numbers(value: &serde_json::Value) -> Vec<f64> {
    value.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

fn pearson(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len() as f64;
    let (mx, my) = pairs.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (c, vx, vy) = pairs.iter().fold((0.0, 0.0, 0.0), |(c, vx, vy), (x, y)| {
        (c + (x - mx) * (y - my), vx + (x - mx).powi(2), vy + (y - my).powi(2))
    });
    c / (vx * vy).sqrt()
}

#[test]
fn vectors_give_every_token_s_query_and_key_their_joint_embedding_and_points() {
    // llama: rotary, two query heads per key head, causal; two sentences
    let (ok, out, err) =
        vectors("llama", &["--text", "The animal was tired.", "--text", "a b", "--layer", "1", "--head", "3"]);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (doc["place"].as_str(), doc["d_k"].as_u64(), doc["explained"].as_array().unwrap().len()),
        (Some("decoder_self"), Some(8), 2)
    );
    assert!((doc["divisor"].as_f64().unwrap() - 8f64.sqrt()).abs() < 1e-6);
    let (c, shift) = (doc["scale"].as_f64().unwrap(), numbers(&doc["shift"]));
    let words = json_of(&["attention", "--model", &fixture("llama"), "--text", "The animal was tired."]);
    assert_eq!(doc["sentences"][0]["tokens"][1]["token"], words["rows"][0]["attention"]["decoder_self"]["queries"][1]);
    let (mut rows, mut centre, mut points) = ([Vec::new(), Vec::new()], [0f64; 2], 0.0);
    for (n, sentence) in doc["sentences"].as_array().unwrap().iter().enumerate() {
        assert!(sentence.get("key_tokens").is_none(), "self-attention: one token list");
        let tokens = sentence["tokens"].as_array().unwrap();
        for (i, t) in tokens.iter().enumerate() {
            assert_eq!(t["position"].as_u64(), Some(i as u64));
            let (q, k) = (numbers(&t["query"]), numbers(&t["key"]));
            // the joint embedding: q × c and (k + shift) ÷ c
            let want = q.iter().map(|x| x * c).chain(k.iter().zip(&shift).map(|(x, s)| (x + s) / c));
            let got = numbers(&t["query_normalized"]).into_iter().chain(numbers(&t["key_normalized"]));
            assert!(got.zip(want).all(|(g, w)| (g - w).abs() < 1e-4), "sentence {n} token {i}: {t}");
            for p in [numbers(&t["query_pca"]), numbers(&t["key_pca"])] {
                (centre, points) = ([centre[0] + p[0], centre[1] + p[1]], points + 1.0);
            }
            // each query over the keys the causal mask lets it see: q·k against the distance
            // between the raw vectors (before) and between the normalized ones (after)
            for (r, (points_q, points_k)) in
                rows.iter_mut().zip([("query", "key"), ("query_normalized", "key_normalized")])
            {
                let p = numbers(&t[points_q]);
                let xy: Vec<(f64, f64)> = tokens[..=i]
                    .iter()
                    .map(|earlier| {
                        let (k, pk) = (numbers(&earlier["key"]), numbers(&earlier[points_k]));
                        let dist = p.iter().zip(&pk).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
                        (q.iter().zip(&k).map(|(a, b)| a * b).sum(), -dist)
                    })
                    .collect();
                if xy.len() >= 2 {
                    r.push(pearson(&xy));
                }
            }
        }
    }
    assert!(centre.iter().all(|x| (x / points).abs() < 1e-4), "the points are centred: {centre:?}");
    for (r, when) in rows.iter().zip(["before", "after"]) {
        let (got, want) = (doc["correlation"][when].as_f64().unwrap(), r.iter().sum::<f64>() / r.len() as f64);
        assert!((got - want).abs() < 1e-4, "correlation {when}: {got}, the mean of each query's r {want}");
    }
}

#[test]
fn vectors_of_cross_attention_put_queries_on_the_decoder_s_tokens_and_keys_on_the_encoder_s() {
    let args = ["--text", "민수가 책을", "--target", "a book", "--place", "cross", "--layer", "1", "--head", "2"];
    let doc: serde_json::Value = serde_json::from_slice(&vectors("t5", &args).1).unwrap();
    assert_eq!((doc["place"].as_str(), doc["divisor"].as_f64()), (Some("cross"), Some(1.0)), "T5 does not scale");
    let (queries, keys) =
        (doc["sentences"][0]["tokens"].as_array().unwrap(), doc["sentences"][0]["key_tokens"].as_array().unwrap());
    assert!(queries.iter().all(|t| t["query"].is_array() && t["query_pca"].is_array() && t.get("key").is_none()));
    assert!(keys.iter().all(|t| t["key"].is_array() && t["key_normalized"].is_array() && t.get("query").is_none()));
    let words = json_of(&["attention", "--model", &fixture("t5"), "--text", "민수가 책을", "--target", "a book"]);
    assert_eq!(keys.len(), words["rows"][0]["attention"]["cross"]["keys"].as_array().unwrap().len());
    // CSV: one line per point, the queries' then the keys'
    let (ok, out, err) = vectors("t5", &[&args[..], &["--format", "csv"]].concat());
    let csv = String::from_utf8(out).unwrap();
    assert!(ok && csv.starts_with("sentence,side,position,token,x,y\n0,query,0,"), "{err}{csv}");
    assert_eq!(csv.lines().count(), 1 + queries.len() + keys.len());
    assert_eq!(csv.lines().filter(|l| l.starts_with("0,key,")).count(), keys.len());
}

#[test]
fn vectors_mistakes_are_explained() {
    let fails = |args: &[&str]| {
        let (ok, _, err) = vectors("bert", &[args, &["--layer", "0", "--head", "0"]].concat());
        assert!(!ok, "{args:?} should fail");
        err
    };
    let (_, _, err) = vectors("bert", &["--text", "a", "--layer", "5", "--head", "0"]);
    assert_eq!(err.trim(), "headmap: layer 5 does not exist: there are 2");
    let (_, _, err) = vectors("bert", &["--text", "a", "--layer", "0", "--head", "9"]);
    assert_eq!(err.trim(), "headmap: head 9 does not exist: there are 4");
    assert!(fails(&["--text", "a", "--text", ""]).starts_with("headmap: text 1: the text is empty"));
    assert!(fails(&["--text", "a", "--place", "cross"]).contains("this model has no cross attention"));
    assert!(fails(&[]).contains("--text"), "a text is required");
    assert!(fails(&["--text", "a", "--text", "b", "--target", "x"]).contains("1 targets for 2 sources"));
    let err = fails(&["--text", "a"].repeat(201));
    assert!(err.starts_with("headmap: the corpus has 201 sentences") && err.contains("at most 200 sentences"), "{err}");
}
