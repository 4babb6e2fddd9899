// Errors in words, by code: the Korean templates (in English the message made with the error
// is already the one a person reads), English templates for the few whose message names places
// and masks by their codes, what a reader can do about an error, and Korean names for the
// settings, places and masks errors mention. Values in {braces} come from an error's details.

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
  "files_missing.tokenizer": "고른 파일에 {files}이(가) 없습니다. 마리안 모델이면 tokenizer.json 대신 source.spm과 vocab.json을 주세요.",
  fetch_failed: "{file}: {url}에서 가져올 수 없습니다.",
  fetch_status: "{file}: {url}이(가) {status}(으)로 응답했습니다.",
  no_safetensors: "model.safetensors가 없습니다: safetensors 형식의 가중치만 읽을 수 있습니다.",
  model_too_large: "{file}: {megabytes}MB로, 이 페이지에서 브라우저 탭이 담을 수 있는 {max}MB를 넘습니다.",
  bad_index: "{file}: 나뉜 체크포인트의 색인이 잘못되었습니다. ‘weight_map’이 이 폴더 안의 조각 파일 이름을 가리켜야 합니다.",
  foreign_host: "모델은 허깅페이스 허브에서만 가져옵니다. {host}에서는 가져오지 않습니다.",
  bad_model_id: "모델 아이디가 아닙니다: 소유자/이름 형식으로 쓰세요.",
  model_not_loaded: "모델이 메모리에서 내려갔습니다. 다시 불러오는 중에 문제가 생겼습니다: 페이지를 새로 고쳐 보세요.",
  run_freed: "이 계산 결과는 메모리에서 내려갔습니다. 다시 계산하는 중에 문제가 생겼습니다: 페이지를 새로 고쳐 보세요.",
  bad_source: "모델 폴더의 주소가 아닙니다: http나 https 주소를 쓰세요.",
  bad_operation: "작업자가 모르는 요청입니다. 페이지와 작업자의 판이 다를 수 있으니 새로 고쳐 보세요.",
  nothing_drawn: "아직 그려진 그림이 없어 저장할 수 없습니다.",
  cannot_save: "이 보기는 {format} 형식으로 저장할 수 없습니다: {formats} 중에서 고르세요.",
  chunk_failed: "위젯의 일부를 불러오지 못했습니다. 연결을 확인하고 페이지를 새로 고쳐 보세요.",
  files_gone: "직접 고른 모델 파일은 다시 읽을 수 없습니다: 모델 폴더를 다시 골라 주세요.",
  worker_failed: "어텐션을 계산하는 작업자가 멈췄습니다. 페이지를 새로 고쳐 보세요.",
  trusted_types: "이 페이지의 콘텐츠 보안 정책(CSP)이 트러스티드 타입 정책 ‘headmap’을 허용하지 않습니다: trusted-types 지시어에 headmap을 더하세요.",
  export_too_large: "이 실행의 가중치는 {megabytes}메가바이트로 페이지에서 저장하기에 너무 큽니다.",
  "file.missing": "{file}: 파일이 없습니다.",
  "file.not_json": "{file}: 올바른 JSON이 아닙니다 ({line}행 {column}열).",
  "file.not_an_object": "{file}: JSON으로는 올바르지만 설정을 담은 객체가 있어야 할 자리에 {found}이(가) 있습니다.",
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
export const WORDS_KO = {
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
  null: "null",
};

/** English wording for the errors whose core message names places and masks by their codes. */
export const ERRORS_EN = {
  mask_not_for_place: "the {mask} does not apply to {place}: use {expected}",
  place_absent: "this model has no {place}; it has {have}",
};
