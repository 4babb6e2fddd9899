// The words the widget and the explorer share, in English and Korean, and every error worded
// in the reader's language; the explorer's own are in explorer/strings.js (see `addStrings`).
// Text only: every string is set with textContent or drawn on a canvas, never parsed as HTML.
// `{name}` marks a value filled in by `fill`.

export const STRINGS = {
  en: {
    title: "headmap — attention, head by head",
    text: "Sentence (encoder input)",
    textDecoderOnly: "Sentence",
    text2: "Second sentence in the batch (padded to the same length)",
    target: "Target (decoder input)",
    place: "Where attention is used",
    "place.encoder_self": "Encoder self-attention",
    "place.encoder_self.hint": "Q, K, V from the encoder input.",
    "place.decoder_self": "Decoder masked self-attention",
    "place.decoder_self.hint": "Q, K, V from the decoder input.",
    "place.cross": "Decoder cross-attention",
    "place.cross.hint": "Q from the decoder, K and V from the encoder's output.",
    mask: "Mask",
    "mask.padding": "Padding mask",
    "mask.padding.hint": "Every key but PAD.",
    "mask.causal": "Causal mask",
    "mask.causal.hint": "Itself and earlier positions, no PAD.",
    "mask.cross": "Source padding mask",
    "mask.cross.hint": "Every source key but PAD.",
    "mask.none": "No mask",
    "mask.none.hint": "Every key, PAD included.",
    trainedWith: "as trained",
    asInPaper: "as in the paper",
    forComparison: "for comparison",
    whatIf: "what-if",
    whatIfNote: "What-if: {model} was trained with {trained} here; this runs it with {mask} instead, a question it never met in training.",
    scale: "Divide scores by √d_k",
    scaleOffNote: "Scores are not divided by √d_k here: the softmax saturates, as the paper warns.",
    decoderRowsNote: "Each decoder row is labelled with the token it reads and predicts the next one (teacher forcing): a row looks at the source of the word it is about to write, so alignments show one row early.",
    model: "Toy model",
    seed: "Seed",
    layer: "Layer",
    head: "Head",
    sentence: "Sentence",
    rowsLabel: "Batch row shown",
    heads: "All heads",
    readout: "Hover over a cell or a token, or tap one.",
    entropy: "Row entropy (bits)",
    table: "Weights as a table",
    tableCaption: "{sentence}, {place}, layer {layer}, head {head}: weights from each query (row) to each key (column)",
    steps: "Step by step",
    "step.x": "X",
    "step.q": "Q = X W_Q",
    "step.k": "K = X W_K",
    "step.v": "V = X W_V",
    "step.scores": "QKᵀ",
    "step.scaled": "÷ √d_k",
    "step.unscaled": "not scaled",
    stepProjections: "X [{tq}, {d}] × W_Q [{d}, {dk}] = Q [{tq}, {dk}]; K and V: [{tk}, {d}] × [{d}, {dk}] = [{tk}, {dk}] (one head's slice, d_k = d_model / h)",
    "step.masked": "mask",
    "step.weights": "softmax",
    "step.output": "· V",
    "step.qRotated": "Q rotated by position (RoPE)",
    "step.kRotated": "K rotated by position (RoPE)",
    "step.positionBias": "position bias",
    "step.biased": "+ position bias",
    gridKv: "K/V head {kv}",
    "heads.grouped": "{heads} query heads share {kv} key/value heads, {per} to each: neighbouring heads in a group read the same K and V and differ only in Q.",
    "heads.windows": "Layers {layers} are local: a query sees only the last {window} tokens (itself included); keys further back are masked.",
    stepSharedKv: "Grouped-query attention: head {head} reads the keys and values of K/V head {kv}, which other query heads share; only its W_Q is its own.",
    stepsTooLong: "The steps are shown up to {max} tokens.",
    stepShapes: "Q [{tq}, {dk}] × Kᵀ [{dk}, {tk}] = scores [{tq}, {tk}] ÷ {scale} → mask → softmax → × V [{tk}, {dk}] = output [{tq}, {dk}]",
    stepShapesNoScale: "Q [{tq}, {dk}] × Kᵀ [{dk}, {tk}] = scores [{tq}, {tk}] → mask → softmax → × V [{tk}, {dk}] = output [{tq}, {dk}]",
    emptyHint: "Type a sentence, or pick an example, to see its attention.",
    query: "query",
    key: "key",
    weight: "weight",
    score: "score",
    scaled: "scaled",
    masked: "masked",
    pad: "PAD",
    cost: "Cost per sentence: QKᵀ {macs} multiply-adds (= h·n²·d/h over {layers} layers), {flops} floating-point operations, {size} of weights · {shape}",
    legendMasked: "masked",
    mixing: "Mixing the values: weights · V",
    "mixing.negative": "A weight is a share: it cannot be negative. Softmax makes every weight 0 or more.",
    "mixing.notOne": "The weights add up to {sum}, not 1: softmax always makes them add up to 1.",
    "mixing.fromHead": "Fill from the shown head, query “{query}”",
    "mixing.pick": "Fill the table with:",
    "mixing.articleExample": "the article's example (0.7 / 0.1 / 0.2)",
    "model.toy": "Toy model (untrained)",
    load: "Load",
    generate: "Fill in the model's own output (greedy)",
    loading: "Loading {model}…",
    "arch.toy": "toy",
    widgetLabel: "Attention heatmap: {place}, layer {layer}, head {head}, of “{text}”",
    badAttribute: "Attribute {attribute}=\"{value}\" cannot be read, so the widget uses its default. Allowed: {expected}.",
    "expected.texts": "a JSON array of sentences, or one sentence per line",
    "expected.model": "trained | small | base | the URL of a folder of Hugging Face files",
    "expected.layer": "a layer number, counted from 0",
    "expected.head": "a head number, counted from 0, or all",
    "expected.seed": "a whole number from 0",
    linesLabel: "Attention of layer {layer} as lines from {tq} queries (left) to {tk} keys (right). Use the arrow keys to choose a token.",
    linesHint: "Hover over a token, or tap it, to see only its lines.",
    linesReadout: "“{token}”: the strongest line runs from “{query}” to “{key}” in head {head}, weight {weight}.",
    "pipe.input": "Input",
    "pipe.linear": "Linear projections",
    "pipe.split": "Split into {heads} heads",
    "pipe.heads": "Attention in every head, side by side",
    "pipe.concat": "Concatenate the heads",
    "pipe.output": "Output projection",
    "pipe.cost": "QKᵀ in all heads: h · n · m · d_k = {h} · {n} · {m} · {dk} = {macs} multiply-adds — the same as one head of width d = h · d_k = {d} (n²d when n = m). More heads reshape the work; they do not reduce it.",
    coverage: "Most of this text is unknown to {model}: its vocabulary does not cover this script, so it sees [UNK] tokens and pieces of characters. Try a multilingual model, such as the tiny Korean–English model.",
    export: "Save",
    "export.png": "PNG image",
    "export.svg": "SVG image",
    "export.json": "weights (JSON)",
    "export.csv": "weights (CSV)",
    heatmapLabel: "Attention weights of {place}, layer {layer}, head {head}: {tq} queries by {tk} keys. Use the arrow keys to read the cells.",
    gridLabel: "Layer {layer}, head {head}",
    gridCorner: "layer \\ head",
    comparisonNote: "For comparison: the paper puts {trained} here; this untrained model runs with {mask} instead.",
    tokenUnknown: "unknown token, stands for “{text}”",
    tokenPart: "piece {k} of {n} of “{text}”",
    tokenContinuation: "continues a word",
    tokenSpecial: "special token",
    mixingWeightLabel: "weight of {token}",
    lang: "한국어",
    error: "Error",
    unknownError: "Something went wrong ({code}).",
  },
  ko: {
    title: "headmap — 헤드별로 보는 어텐션",
    text: "문장 (인코더 입력)",
    textDecoderOnly: "문장",
    text2: "배치의 두 번째 문장 (같은 길이로 패딩)",
    target: "타깃 (디코더 입력)",
    place: "어텐션이 쓰이는 위치",
    "place.encoder_self": "인코더 셀프 어텐션",
    "place.encoder_self.hint": "Q·K·V 모두 인코더 입력에서.",
    "place.decoder_self": "디코더 마스크드 셀프 어텐션",
    "place.decoder_self.hint": "Q·K·V 모두 디코더 입력에서.",
    "place.cross": "디코더 크로스 어텐션",
    "place.cross.hint": "Q는 디코더, K·V는 인코더의 최종 출력에서.",
    mask: "마스크",
    "mask.padding": "패딩 마스크",
    "mask.padding.hint": "패딩을 제외한 모든 키.",
    "mask.causal": "인과 마스크",
    "mask.causal.hint": "현재 위치와 이전 위치만, 패딩 제외.",
    "mask.cross": "원문 패딩 마스크",
    "mask.cross.hint": "패딩을 제외한 원문의 모든 키.",
    "mask.none": "마스크 없음",
    "mask.none.hint": "패딩까지 모든 키.",
    trainedWith: "학습 때와 같음",
    asInPaper: "논문과 같음",
    forComparison: "비교용",
    whatIf: "가정 실험",
    whatIfNote: "가정 실험: {model} 모델은 이 위치에서 {trained}(으)로 학습되었는데, 여기서는 {mask}(으)로 실행했습니다. 학습 때 만난 적 없는 조건에 대한 모델의 반응입니다.",
    scale: "점수를 √d_k로 나누기",
    scaleOffNote: "여기서는 점수를 √d_k로 나누지 않습니다: 논문이 경고한 대로 소프트맥스가 한쪽으로 쏠립니다.",
    decoderRowsNote: "디코더의 각 행은 자기가 읽는 토큰으로 이름 붙어 있고, 그다음 토큰을 예측합니다(교사 강요). 곧 쓸 단어의 원문을 보기 때문에 정렬은 한 행 먼저 나타납니다.",
    model: "토이 모델",
    seed: "시드",
    layer: "층",
    head: "헤드",
    sentence: "문장",
    rowsLabel: "보이는 배치 행",
    heads: "모든 헤드",
    readout: "칸이나 토큰 위에 마우스를 올리거나 눌러 보세요.",
    entropy: "행 엔트로피 (비트)",
    table: "가중치 표",
    tableCaption: "{sentence}, {place}, {layer}층, {head}번 헤드: 각 쿼리(행)에서 각 키(열)로 가는 가중치",
    steps: "단계별 계산",
    "step.x": "X",
    "step.q": "Q = X W_Q",
    "step.k": "K = X W_K",
    "step.v": "V = X W_V",
    "step.scores": "QKᵀ",
    "step.scaled": "÷ √d_k",
    "step.unscaled": "나누지 않음",
    stepProjections: "X [{tq}, {d}] × W_Q [{d}, {dk}] = Q [{tq}, {dk}]; K와 V: [{tk}, {d}] × [{d}, {dk}] = [{tk}, {dk}] (헤드 하나의 몫, d_k = d_model / h)",
    "step.masked": "마스크",
    "step.weights": "소프트맥스",
    "step.output": "· V",
    "step.qRotated": "위치만큼 회전한 Q (RoPE)",
    "step.kRotated": "위치만큼 회전한 K (RoPE)",
    "step.positionBias": "위치 편향",
    "step.biased": "+ 위치 편향",
    gridKv: "{kv}번 키·값 헤드",
    "heads.grouped": "쿼리 헤드 {heads}개가 키·값 헤드 {kv}개를 {per}개씩 나눠 씁니다: 한 그룹의 이웃한 헤드는 같은 K와 V를 읽고 Q만 다릅니다.",
    "heads.windows": "{layers}층은 지역 어텐션입니다: 쿼리는 자신을 포함해 최근 토큰 {window}개만 보고, 그보다 앞선 키는 가려집니다.",
    stepSharedKv: "그룹 쿼리 어텐션: {head}번 헤드는 다른 쿼리 헤드와 함께 쓰는 {kv}번 키·값 헤드의 K와 V를 읽습니다. 헤드마다 다른 것은 W_Q뿐입니다.",
    stepsTooLong: "단계별 계산은 토큰 {max}개까지 보입니다.",
    stepShapes: "Q [{tq}, {dk}] × Kᵀ [{dk}, {tk}] = 점수 [{tq}, {tk}] ÷ {scale} → 마스크 → 소프트맥스 → × V [{tk}, {dk}] = 출력 [{tq}, {dk}]",
    stepShapesNoScale: "Q [{tq}, {dk}] × Kᵀ [{dk}, {tk}] = 점수 [{tq}, {tk}] → 마스크 → 소프트맥스 → × V [{tk}, {dk}] = 출력 [{tq}, {dk}]",
    emptyHint: "문장을 입력하거나 예시를 골라 어텐션을 확인하세요.",
    query: "쿼리",
    key: "키",
    weight: "가중치",
    score: "점수",
    scaled: "나눈 점수",
    masked: "마스크됨",
    pad: "패딩",
    cost: "문장 하나의 비용: QKᵀ 곱셈-덧셈 {macs}번 (= {layers}개 층에 걸친 h·n²·d/h), 부동소수점 연산 {flops}번, 가중치 {size} · {shape}",
    legendMasked: "마스크됨",
    mixing: "V의 가중합: 가중치 · V",
    "mixing.negative": "가중치는 비율이라 음수일 수 없습니다. 소프트맥스는 모든 가중치를 0 이상으로 만듭니다.",
    "mixing.notOne": "가중치의 합이 1이 아니라 {sum}입니다: 소프트맥스의 출력은 언제나 합이 1입니다.",
    "mixing.fromHead": "보이는 헤드의 쿼리 ‘{query}’(으)로 채우기",
    "mixing.pick": "표를 채울 값:",
    "mixing.articleExample": "글의 예시 (0.7 / 0.1 / 0.2)",
    "model.toy": "토이 트랜스포머 (학습 안 됨)",
    load: "불러오기",
    generate: "모델의 출력으로 채우기 (탐욕적 디코딩)",
    loading: "{model} 불러오는 중…",
    "arch.toy": "토이",
    widgetLabel: "어텐션 히트맵: ‘{text}’의 {place}, {layer}층, {head}번 헤드",
    badAttribute: "속성 {attribute}=\"{value}\"을(를) 읽을 수 없어 기본값으로 그립니다. 쓸 수 있는 값: {expected}.",
    "expected.texts": "문장들의 JSON 배열, 또는 한 줄에 한 문장",
    "expected.model": "trained | small | base | 허깅 페이스 파일이 든 폴더의 URL",
    "expected.layer": "0부터 세는 층 번호",
    "expected.head": "0부터 세는 헤드 번호, 또는 all",
    "expected.seed": "0 이상의 정수",
    linesLabel: "{layer}층의 어텐션을 쿼리 {tq}개(왼쪽)에서 키 {tk}개(오른쪽)로 가는 선으로 그렸습니다. 화살표 키로 토큰을 고르세요.",
    linesHint: "토큰 위에 마우스를 올리거나 눌러 그 토큰의 선만 보세요.",
    linesReadout: "‘{token}’: 가장 굵은 선은 {head}번 헤드에서 ‘{query}’에서 ‘{key}’(으)로 가며, 가중치는 {weight}입니다.",
    "pipe.input": "입력",
    "pipe.linear": "선형 투영",
    "pipe.split": "헤드 {heads}개로 나누기",
    "pipe.heads": "헤드마다 나란히 어텐션",
    "pipe.concat": "헤드 이어 붙이기",
    "pipe.output": "출력 투영",
    "pipe.cost": "모든 헤드의 QKᵀ: h · n · m · d_k = {h} · {n} · {m} · {dk} = 곱셈-덧셈 {macs}번 — 폭 d = h · d_k = {d}인 헤드 하나와 같습니다 (n = m이면 n²d). 헤드를 늘리면 일을 나눌 뿐, 줄이지는 않습니다.",
    coverage: "이 텍스트의 대부분을 {model} 모델이 알지 못합니다: 어휘가 이 문자를 다루지 않아 [UNK] 토큰과 글자 조각으로 보입니다. 작은 한영 번역 모델처럼 여러 언어를 아는 모델을 써 보세요.",
    export: "저장",
    "export.png": "PNG 그림",
    "export.svg": "SVG 그림",
    "export.json": "가중치 (JSON)",
    "export.csv": "가중치 (CSV)",
    heatmapLabel: "{place}, {layer}층, {head}번 헤드의 어텐션 가중치: 쿼리 {tq}개 × 키 {tk}개. 화살표 키로 칸을 읽을 수 있습니다.",
    gridLabel: "{layer}층, {head}번 헤드",
    gridCorner: "층 \\ 헤드",
    comparisonNote: "비교용: 논문은 이 위치에 {trained}을(를) 씁니다. 학습되지 않은 이 모델을 {mask}(으)로 실행했습니다.",
    tokenUnknown: "모르는 토큰, ‘{text}’ 대신",
    tokenPart: "‘{text}’의 {n}조각 중 {k}번째",
    tokenContinuation: "단어의 이어지는 조각",
    tokenSpecial: "특수 토큰",
    mixingWeightLabel: "{token}의 가중치",
    lang: "English",
    error: "오류",
    unknownError: "알 수 없는 오류가 생겼습니다 ({code}).",
  },
};

/**
 * Errors by code, in Korean. (In English the message from the core is already the one a
 * person reads.) Values in {braces} come from the error's details; lists are joined.
 */
export const ERRORS_KO = {
  empty_text: "텍스트가 비어 있습니다: 어텐션을 보려면 문장을 입력하세요.",
  too_long: "텍스트가 토큰 {tokens}개로, 최대 {max}개를 넘습니다.",
  text_too_long: "텍스트가 {chars}자로, 최대 {max}자를 넘습니다.",
  batch_too_large: "문장이 {texts}개로, 한 배치의 최대 {max}개를 넘습니다.",
  targets_mismatch: "원문 {texts}개에 타깃이 {targets}개입니다: 원문마다 하나씩 주거나 비워 두세요.",
  heads_do_not_divide: "헤드 {heads}개로는 d_model = {d_model}을(를) 나눌 수 없습니다: 각 헤드가 d_model / 헤드 수만큼의 열을 맡습니다.",
  kv_heads_do_not_divide: "키·값 헤드 {kv_heads}개로는 쿼리 헤드 {heads}개를 고르게 나눌 수 없습니다: 키·값 헤드마다 같은 수의 쿼리 헤드를 맡습니다.",
  shape: "‘{what}’의 모양이 {got}인데, {expected}이어야 합니다.",
  non_finite: "‘{what}’의 {index} 위치에 유한하지 않은 값이 있습니다.",
  unknown_name: "알 수 없는 {setting} ‘{value}’: {expected} 중에서 고르세요.",
  no_such: "{what} {index}번은 없습니다: {count}개가 있습니다.",
  out_of_range: "{setting} {value}은(는) 허용 범위 {min}–{max}을(를) 벗어납니다.",
  ragged: "‘{what}’: 값 {values}개로는 {cols}열짜리 행을 채울 수 없습니다.",
  mask_not_for_place: "{mask}은(는) {place}에 쓸 수 없습니다: {expected} 중에서 고르세요.",
  place_absent: "이 모델에는 {place}이(가) 없습니다. 있는 것: {have}.",
  cannot_generate: "{architecture} 모델은 스스로 출력을 쓸 수 없습니다: 인코더–디코더 모델이어야 합니다.",
  token_out_of_vocabulary: "토큰 번호 {id}이(가) 모델의 어휘 크기 {vocab}을(를) 벗어납니다.",
  tokenizer_failed: "토크나이저가 이 텍스트를 나누지 못했습니다.",
  too_large: "이 실행은 어텐션 가중치를 {megabytes}메가바이트 보관해야 해서 한도 {max}메가바이트를 넘습니다: 더 짧은 텍스트나 더 적은 문장·층을 쓰세요.",
  files_missing: "고른 파일에 {files}이(가) 없습니다.",
  fetch_failed: "{file}: {url}에서 가져올 수 없습니다.",
  fetch_status: "{file}: {url}이(가) {status}(으)로 응답했습니다.",
  no_safetensors: "model.safetensors가 없습니다: safetensors 형식의 가중치만 읽을 수 있습니다.",
  model_too_large: "{file}: {megabytes}MB로, 이 페이지에서 브라우저 탭이 담을 수 있는 {max}MB를 넘습니다.",
  bad_index: "{file}: 나뉜 체크포인트의 색인이 잘못되었습니다. ‘weight_map’이 이 폴더 안의 조각 파일 이름을 가리켜야 합니다.",
  foreign_host: "모델은 허깅페이스 허브에서만 가져옵니다. {host}에서는 가져오지 않습니다.",
  bad_model_id: "모델 아이디가 아닙니다: 소유자/이름 형식으로 쓰세요.",
  worker_failed: "어텐션을 계산하는 작업자가 멈췄습니다. 페이지를 새로 고쳐 보세요.",
  trusted_types: "이 페이지의 콘텐츠 보안 정책(CSP)이 트러스티드 타입 정책 ‘headmap’을 허용하지 않습니다: trusted-types 지시어에 headmap을 더하세요.",
  export_too_large: "이 실행의 가중치는 {megabytes}메가바이트로 페이지에서 저장하기에 너무 큽니다.",
  "file.missing": "{file}: 파일이 없습니다.",
  "file.not_json": "{file}: 올바른 JSON이 아닙니다 ({line}행 {column}열).",
  "file.wrong_type": "{file}: ‘{field}’의 형식이 틀렸습니다: {expected}이어야 합니다.",
  "file.no_model_type": "{file}: ‘model_type’이 없습니다.",
  "file.unsupported_model": "{file}: 모델 종류 ‘{model_type}’은(는) 지원하지 않습니다. 읽을 수 있는 종류: {supported}.",
  "file.unsupported_setting": "{file}: ‘{setting}’ = {value}은(는) 지원하지 않는 설정입니다.",
  "file.impossible_setting": "{file}: ‘{setting}’ = {value}은(는) 불가능한 값입니다.",
  "file.not_safetensors": "{file}: 올바른 safetensors 파일이 아닙니다. 손상되었거나 잘렸거나 다른 형식입니다.",
  "file.missing_tensor": "{file}: 텐서 ‘{name}’이(가) 없습니다.",
  "file.not_shard_index": "{file}: 나뉜 체크포인트의 색인이 아닙니다. 텐서 이름과 파일 이름을 잇는 ‘weight_map’이 있어야 합니다.",
  "file.missing_shard": "{file}: 조각 파일 ‘{shard}’이(가) 주어지지 않았습니다.",
  "file.tensor_not_in_shard": "{file}: 텐서 ‘{name}’이(가) ‘{shard}’에 있다고 하지만 그 파일에는 없습니다.",
  "file.none_of_tensors": "{file}: 텐서 {names} 중 어느 것도 없습니다.",
  "file.wrong_shape": "{file}: 텐서 ‘{name}’의 모양이 {got}인데, {expected}이어야 합니다.",
  "file.unsupported_dtype": "{file}: 텐서 ‘{name}’의 자료형 {dtype}은(는) 읽을 수 없습니다. f32, f16, bf16만 읽습니다.",
  "file.non_finite_tensor": "{file}: 텐서 ‘{name}’의 {index}번째 값이 유한하지 않습니다.",
  "file.not_tokenizer": "{file}: 토크나이저를 불러올 수 없습니다. 읽을 수 있는 토크나이저 파일이 아닙니다.",
  "file.vocabulary_too_large": "{file}: 토크나이저의 어휘({tokenizer}개)가 모델의 어휘({model}개)보다 큽니다.",
  "file.no_tokenizer": "{file}: 토크나이저가 없습니다. tokenizer.json을, 마리안 모델이면 source.spm과 vocab.json을 주세요.",
  "file.not_sentence_piece": "{file}: 센텐스피스 모델이 아닙니다.",
  "file.not_vocabulary": "{file}: 조각과 번호를 잇는 JSON 맵이 아닙니다.",
  "file.missing_piece": "{file}: ‘{piece}’이(가) 없습니다.",
};

/** What a reader can do about an error, by code: said after the error itself. */
export const HINTS = {
  en: {
    too_long: "Shorten the text, or choose a model that reads longer texts.",
    text_too_long: "Shorten the text.",
    batch_too_large: "Use fewer sentences.",
    too_large: "",
    fetch_failed: "Check the model id and your connection; the page may be offline.",
    fetch_status: "Check the model id: the Hub has no such file for it.",
    files_missing: "Choose the model's whole folder, or all of its files.",
    no_safetensors: "Choose a model published with model.safetensors.",
    model_too_large: "Choose a smaller model: up to about 500 M parameters stored as f16 or bf16.",
    bad_model_id: "",
  },
  ko: {
    too_long: "텍스트를 줄이거나 더 긴 텍스트를 읽는 모델을 고르세요.",
    text_too_long: "텍스트를 줄이세요.",
    batch_too_large: "문장 수를 줄이세요.",
    fetch_failed: "모델 아이디와 인터넷 연결을 확인하세요. 오프라인일 수 있습니다.",
    fetch_status: "모델 아이디를 확인하세요. 허브에 그 모델의 파일이 없습니다.",
    files_missing: "모델 폴더 전체나 모든 파일을 고르세요.",
    no_safetensors: "model.safetensors로 공개된 모델을 고르세요.",
    model_too_large: "더 작은 모델을 고르세요: f16이나 bf16으로 저장된 파라미터 5억 개 정도까지 읽습니다.",
  },
};

/** Korean words for the names errors mention (settings, places, masks, kinds of value). */
const WORDS_KO = {
  mask: "마스크",
  place: "위치",
  preset: "크기",
  layer: "층",
  layers: "층 수",
  head: "헤드",
  row: "문장",
  d_model: "d_model",
  d_ff: "d_ff",
  encoder_self: "인코더 셀프 어텐션",
  decoder_self: "디코더 마스크드 셀프 어텐션",
  cross: "크로스 어텐션",
  none: "마스크 없음",
  padding: "패딩 마스크",
  causal: "인과 마스크",
  small: "소형",
  base: "기본",
  "a whole number": "정수",
  "a number": "숫자",
  "true or false": "참 또는 거짓",
  text: "문자열",
  "a list": "목록",
  "another kind of value": "다른 종류의 값",
};

/** Adds a page's own strings ({ en: {…}, ko: {…} }) to the shared ones. */
export function addStrings(more) {
  for (const [lang, strings] of Object.entries(more)) Object.assign(STRINGS[lang], strings);
}

/** "ko" when the browser prefers Korean, else "en". */
export function browserLang(languages = globalThis.navigator?.languages ?? []) {
  return languages.some((l) => l.toLowerCase().startsWith("ko")) ? "ko" : "en";
}

/** The string `key` in `lang`, falling back to English, then to the key itself. */
export function t(lang, key) {
  return STRINGS[lang]?.[key] ?? STRINGS.en[key] ?? key;
}

/**
 * `template` with each {name} replaced by `values[name]`, and the template's Korean particle
 * pairs fitted to the word before them: a value's last syllable, or the template's own text.
 * The values themselves are never touched (a reader's sentence may hold "이(가)" as typed).
 */
export function fill(template, values = {}) {
  const fitted = template.replace(VALUE_PAIR, (whole, name, quotes, pair) =>
    name in values ? `{${name}}${quotes}${fit(pair, finalConsonant(String(values[name]) + quotes))}` : whole,
  );
  return particles(fitted).replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

// A Korean particle depends on whether the word before it ends in a consonant (받침): 동물이,
// 마스크가. Templates write both forms, 이(가), and this picks one from the last syllable or
// digit as read aloud; after a Latin word the pair stays, as Korean writing does.
const PAIRS = { "은(는)": ["은", "는"], "이(가)": ["이", "가"], "을(를)": ["을", "를"], "과(와)": ["과", "와"], "(으)로": ["으로", "로"] };
const DIGIT_FINAL = { 0: 1, 1: 8, 2: 0, 3: 16, 4: 0, 5: 0, 6: 1, 7: 8, 8: 8, 9: 0 }; // 영/십/백…, 일, 이, 삼, 사, 오, 육, 칠, 팔, 구
const PAIR = "은\\(는\\)|이\\(가\\)|을\\(를\\)|과\\(와\\)|\\(으\\)로";
const CLOSERS = "’”)」』'\"";
/** A value, closing quotes, then a particle pair: `{key}’(으)로`. */
const VALUE_PAIR = new RegExp(`\\{(\\w+)\\}([${CLOSERS}]*)(${PAIR})`, "g");

/** The form of particle `pair` after a word whose final consonant is `final` (null: unknown). */
function fit(pair, final) {
  if (final === null) return pair;
  const [consonant, vowel] = PAIRS[pair];
  if (pair === "(으)로") return final === 0 || final === 8 ? vowel : consonant;
  return final === 0 ? vowel : consonant;
}

/** The final consonant of the last word before `end` in `text`: 0 none, 8 ㄹ, else another; null unknown. */
function finalConsonant(text, end = text.length) {
  let i = end - 1;
  while (i >= 0 && CLOSERS.includes(text[i])) i--; // look through closing quotes and brackets
  const c = text.codePointAt(i);
  if (c >= 0xac00 && c <= 0xd7a3) return (c - 0xac00) % 28;
  if (c >= 0x30 && c <= 0x39) return DIGIT_FINAL[c - 0x30];
  return null;
}

/** `text` with each paired particle, 이(가), replaced by the form its word takes. */
export function particles(text) {
  return text.replace(new RegExp(PAIR, "g"), (pair, at) => fit(pair, finalConsonant(text, at)));
}

const BYTE_UNITS = { en: ["KiB", "MiB", "GiB"], ko: ["키비바이트", "메비바이트", "기비바이트"] };

/** `bytes` in the largest binary unit that keeps at least 1 (KiB at least), as `lang` writes it. */
export function formatBytes(lang, bytes) {
  const units = BYTE_UNITS[lang] ?? BYTE_UNITS.en;
  let i = 0;
  let value = bytes / 1024;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  const number = value.toLocaleString(lang === "ko" ? "ko-KR" : "en-US", { maximumFractionDigits: 1 });
  return lang === "ko" ? `${number}${units[i]}` : `${number} ${units[i]}`;
}

/** `t(lang, key)` filled with `values`. */
export function tf(lang, key, values) {
  return fill(t(lang, key), values);
}

/**
 * An error as the reader should read it: the core's own message in English; in Korean the
 * template of its code, with its details filled in and the names in them translated.
 */
export function errorText(lang, error) {
  const text = wordError(lang, error);
  const hint = HINTS[lang]?.[error?.code] ?? "";
  // a sentence, then what to do about it (a file name keeps its case: "config.json: …")
  const first = text.split(/[\s:]/)[0];
  const sentence = first.includes(".") ? text : text.charAt(0).toUpperCase() + text.slice(1);
  const ended = /[.!?。]$/.test(sentence) ? sentence : `${sentence}.`;
  return hint ? `${ended} ${hint}` : ended;
}

/** English wording for the errors whose core message names places and masks by their codes. */
const ERRORS_EN = {
  mask_not_for_place: "the {mask} does not apply to {place}: use {expected}",
  place_absent: "this model has no {place}; it has {have}",
};

/**
 * A place's or mask's name as a sentence uses it ("the padding mask"), or null for other
 * values. `details` tell which a list or a value is: `unknown_name` names its `setting`.
 */
function nameOf(lang, code, key, value, details = {}) {
  const listed = code === "unknown_name" && (key === "value" || key === "expected") && ["mask", "place"].includes(details.setting) ? details.setting : null;
  const kind = listed ?? (key === "mask" || (code === "mask_not_for_place" && key === "expected") ? "mask" : key === "place" || key === "have" ? "place" : null);
  const name = kind && STRINGS[lang][`${kind}.${value}`];
  if (!name) return null;
  return lang === "en" ? name.charAt(0).toLowerCase() + name.slice(1) : name;
}

function wordError(lang, error) {
  const code = error?.code;
  if (lang !== "ko") {
    const template = ERRORS_EN[code];
    if (!template || !error?.details) return error?.message ?? String(error);
    const values = {};
    for (const [k, v] of Object.entries(error.details)) {
      const word = (x) => nameOf("en", code, k, x, error.details) ?? x;
      if (k === "expected" && Array.isArray(v)) {
        const masks = v.map(word).map((name) => (name === "no mask" ? name : `the ${name}`));
        values[k] = masks.length > 1 ? `${masks.slice(0, -1).join(", ")} or ${masks.at(-1)}` : masks.join("");
      } else values[k] = Array.isArray(v) ? v.map(word).join(", ") : word(v);
    }
    return fill(template, values);
  }
  // a file's problem is nested: { code: "file", file, problem: { problem: "wrong_shape", … } }
  const { problem = null, ...rest } = error?.details ?? {};
  const details = problem && typeof problem === "object" ? { ...rest, ...problem } : rest;
  const key = code === "file" && problem ? `file.${problem.problem}` : code;
  const template = ERRORS_KO[key];
  if (!template) return fill(STRINGS.ko.unknownError, { code: code ?? "?" });
  const values = {};
  for (const [k, v] of Object.entries(details)) {
    const word = (x) => nameOf("ko", code, k, x, details) ?? WORDS_KO[x] ?? x;
    values[k] = Array.isArray(v) ? (v.every((x) => typeof x === "number") ? `[${v.join(", ")}]` : v.map(word).join(", ")) : word(v);
  }
  return fill(template, values);
}
