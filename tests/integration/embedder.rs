//! The local all-MiniLM-L6-v2 embedder (model files from scripts/setup).

use ragstream::embedding::{Embedder, MiniLmEmbedder};

use crate::common::model_dir;

fn model() -> MiniLmEmbedder {
    MiniLmEmbedder::load(&model_dir(), 32, 256).expect("run scripts/setup to fetch the model")
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_are_384_d_unit_length_and_deterministic() {
    let m = model();
    assert_eq!(m.dimensions(), 384);
    let texts = [
        "A man is eating food.",
        "Un texte en français, plus long que le premier.",
    ];
    let a = m.embed(&texts).unwrap();
    let b = m.embed(&texts).unwrap();
    assert_eq!(a, b, "same input, same bits");
    for v in &a {
        assert_eq!(v.len(), 384);
        assert!((dot(v, v) - 1.0).abs() < 1e-5);
    }
    // Padding is masked out exactly, so the batch a text is embedded in (and the length it
    // is padded to) does not change a single bit of its vector.
    let alone = m.embed(&texts[..1]).unwrap();
    assert_eq!(alone[0], a[0]);
    let long =
        "A much longer companion text that forces far more padding onto the others. ".repeat(6);
    let mixed = m.embed(&["tiny", texts[0], &long, texts[1]]).unwrap();
    assert_eq!(mixed[1], a[0]);
    assert_eq!(mixed[3], a[1]);
}

/// A text longer than the model's window is embedded whole: its vector is the token-weighted
/// mean of its windows', so what comes after the first window moves it, and a text that fits
/// keeps, bit for bit, the vector a longer window gives it.
#[test]
fn a_text_longer_than_the_window_is_embedded_whole() {
    let narrow = MiniLmEmbedder::load(&model_dir(), 8, 16).unwrap();
    let head = "The recipe calls for flour, sugar, butter and two eggs.";
    let tail = "Volcanic eruptions throw ash and sulfur dioxide high into the stratosphere.";
    let text = format!("{head} {tail}");
    let v = narrow.embed(&[&text, head, tail]).unwrap();
    let (whole, head_v, tail_v) = (&v[0], &v[1], &v[2]);
    assert!((dot(whole, whole) - 1.0).abs() < 1e-5);
    // Cut at the window, the text would be little more than its head.
    assert!(
        dot(whole, tail_v) > dot(head_v, tail_v) + 0.2,
        "the tail is part of the vector: {} against {}",
        dot(whole, tail_v),
        dot(head_v, tail_v)
    );
    // Both parts are in it: it is nearer each than they are to each other.
    let apart = dot(head_v, tail_v);
    assert!(
        dot(whole, head_v) > apart + 0.2 && dot(whole, tail_v) > apart + 0.2,
        "head {}, tail {}, apart {apart}",
        dot(whole, head_v),
        dot(whole, tail_v)
    );
    // Deterministic, and independent of what else is embedded with it.
    assert_eq!(narrow.embed(&[&text]).unwrap()[0], *whole);
    assert_eq!(narrow.embed(&[tail, &text, "tiny"]).unwrap()[1], *whole);
    // The head fits both windows: the same bits.
    assert_eq!(model().embed(&[head]).unwrap()[0], *head_v);
    // A window weighs by its tokens: a short last window moves the vector a little.
    let full_head = "The recipe calls for flour, sugar, butter, milk and two eggs tonight.";
    let short_tail = "Volcano.";
    let text2 = format!("{full_head} {short_tail}");
    let v2 = narrow.embed(&[&text2, full_head, short_tail]).unwrap();
    let first2 = narrow.first_window(&text2).unwrap();
    assert!(first2.len() < text2.len(), "the text overflows one window");
    assert!(
        dot(&v2[0], &v2[1]) > dot(&v2[0], &v2[2]) + 0.2,
        "the head's tokens outweigh the short tail's: head {}, tail {}",
        dot(&v2[0], &v2[1]),
        dot(&v2[0], &v2[2])
    );
    // What benchmarks time as one window is one: its vector is the window's alone.
    let first = narrow.first_window(&text).unwrap();
    assert!(text.starts_with(first) && first.len() < text.len() && first.starts_with(head));
    assert_ne!(narrow.embed(&[first]).unwrap()[0], *whole);
}

#[test]
fn similar_sentences_are_closer() {
    let m = model();
    let v = m
        .embed(&[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ])
        .unwrap();
    assert!(dot(&v[0], &v[1]) > 0.6);
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.3);
}

#[test]
fn a_corrupt_model_file_is_rejected_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["tokenizer.json", "config.json"] {
        std::fs::copy(model_dir().join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("model.safetensors"), b"not weights").unwrap();
    let err = MiniLmEmbedder::load(dir.path(), 8, 256)
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        err.contains("model.safetensors") && err.contains("corrupt"),
        "{err}"
    );
    std::fs::remove_file(dir.path().join("config.json")).unwrap();
    let err = MiniLmEmbedder::load(dir.path(), 8, 256)
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        err.contains("config.json") && err.contains("missing"),
        "{err}"
    );
}

fn static_dir() -> std::path::PathBuf {
    ragstream::config::Config::load_from(None, Vec::new())
        .unwrap()
        .model
        .static_dir
}

#[test]
fn distillation_is_deterministic() {
    // Two runs over the first 600 vocabulary rows give the same bytes (the full vocabulary is
    // distilled once by scripts/setup; its sha256 is recorded in distill.json).
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ra = ragstream::embedding::distill::distill(&model_dir(), a.path(), Some(600)).unwrap();
    let rb = ragstream::embedding::distill::distill(&model_dir(), b.path(), Some(600)).unwrap();
    assert_eq!((ra.vocabulary, ra.dimensions), (600, 384));
    assert_eq!(ra.sha256, rb.sha256);
    assert_eq!(
        std::fs::read(a.path().join("model.safetensors")).unwrap(),
        std::fs::read(b.path().join("model.safetensors")).unwrap()
    );
}

#[test]
fn the_static_model_ranks_related_text_first_and_is_deterministic() {
    use ragstream::embedding::StaticEmbedder;
    let m = StaticEmbedder::load(&static_dir(), 256).expect("run scripts/setup to distil it");
    assert_eq!(m.dimensions(), 384);
    assert_eq!(m.id(), "all-minilm-l6-v2-static");
    let texts = [
        "How do I lubricate the pump bearings?",
        "Grease the bearings of the pump every 500 hours of operation.",
        "The Apollo 11 mission landed the first humans on the Moon in 1969.",
    ];
    let v = m.embed(&texts).unwrap();
    assert_eq!(v, m.embed(&texts).unwrap(), "same input, same bits");
    for x in &v {
        assert!((dot(x, x) - 1.0).abs() < 1e-4);
    }
    assert!(
        dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.1,
        "pump question closer to the pump answer: {} vs {}",
        dot(&v[0], &v[1]),
        dot(&v[0], &v[2])
    );
    let missing = StaticEmbedder::load(std::path::Path::new("/nonexistent/static"), 256);
    let err = missing
        .err()
        .expect("a missing model is an error")
        .to_string();
    assert!(
        err.contains("/nonexistent/static") && err.contains("distill"),
        "{err}"
    );
}
