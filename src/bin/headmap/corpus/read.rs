//! The corpus's rows as read: a Parquet file's column, a JSONL file's field (or bare strings),
//! a text file's lines; each a text, or why there is none.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use headmap::tokenize::{check_length, MAX_TEXT_CHARS};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use parquet::schema::types::Type;
use serde_json::Value;

use super::Item;

/// Every row of `input`, in order, to `each`: Parquet by its magic bytes, JSONL by its name
/// (.jsonl, .ndjson, .json), else text, a text per line.
pub(super) fn read(input: &Path, column: &str, each: &mut dyn FnMut(Item) -> Result<(), String>) -> Result<(), String> {
    let at = |e: std::io::Error| format!("{}: {e}", input.display());
    let mut magic = [0u8; 4];
    let is_parquet = {
        let mut f = File::open(input).map_err(at)?;
        std::io::Read::read(&mut f, &mut magic).map_err(at)? == 4 && &magic == b"PAR1"
    };
    if is_parquet {
        return read_parquet(input, column, each);
    }
    let name = input.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let jsonl = matches!(name.as_str(), "jsonl" | "ndjson" | "json");
    let mut reader = BufReader::new(File::open(input).map_err(at)?);
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        // a line is read up to LINE_BYTES, and the rest of a longer one passed over unread
        let read = reader.by_ref().take(LINE_BYTES as u64 + 1).read_until(b'\n', &mut line).map_err(at)?;
        if read == 0 {
            break;
        }
        if line.len() > LINE_BYTES && line.last() != Some(&b'\n') {
            skip_line(&mut reader).map_err(at)?;
            each(Err(format!("line {number} is longer than {} MB", LINE_BYTES >> 20)))?;
            continue;
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        let item = match std::str::from_utf8(&line) {
            Err(_) => Err(format!("line {number} is not UTF-8 text")),
            Ok(text) if !jsonl => Ok(text.to_string()),
            Ok(text) => json_item(text, column, number),
        };
        each(item.and_then(at_most_max_chars))?;
    }
    Ok(())
}

/// Bytes of one line of a text or JSONL corpus read at most: a text is at most
/// `MAX_TEXT_CHARS` characters, and a JSONL row may carry other fields beside it.
const LINE_BYTES: usize = 16 << 20;

/// Reads past the next newline (or to the end), keeping nothing.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        let (used, end) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        reader.consume(used);
        if end {
            return Ok(());
        }
    }
}

/// A text longer than the model reads is refused as it is read, as the model would refuse it,
/// so that a batch holds no more than that of each text.
fn at_most_max_chars(text: String) -> Item {
    check_length(&text, MAX_TEXT_CHARS).map_err(|e| e.to_string())?;
    Ok(text)
}

fn json_item(line: &str, column: &str, number: usize) -> Item {
    let value: Value = serde_json::from_str(line).map_err(|_| format!("line {number} is not JSON"))?;
    let value = match value {
        Value::Object(mut fields) => {
            fields.remove(column).ok_or_else(|| format!("line {number} has no field '{column}'"))?
        }
        other => other,
    };
    match value {
        Value::String(text) => Ok(text),
        other => Err(format!("not a string: {}", json_kind(&other))),
    }
}

/// A value that is not text, as Python names its type (so the two say the same).
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a bool",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "a int",
        Value::String(_) => "a str",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

fn read_parquet(input: &Path, column: &str, each: &mut dyn FnMut(Item) -> Result<(), String>) -> Result<(), String> {
    let at =
        |e: parquet::errors::ParquetError| format!("{}: not a Parquet file headmap can read: {e}", input.display());
    let reader =
        SerializedFileReader::new(File::open(input).map_err(|e| format!("{}: {e}", input.display()))?).map_err(at)?;
    let schema = reader.metadata().file_metadata().schema();
    let names: Vec<String> = schema.get_fields().iter().map(|f| f.name().to_string()).collect();
    // the rows with only these columns read
    let project = |fields| Type::group_type_builder(schema.name()).with_fields(fields).build().map_err(at);
    if !names.iter().any(|n| n == column) {
        // a row each, as many as the file holds: counted by reading its first column, not
        // taken from the footer, which may say anything
        let why = format!("no column '{column}' (the columns: {})", names.join(", "));
        let first = project(schema.get_fields().iter().take(1).cloned().collect())?;
        for row in reader.get_row_iter(Some(first)).map_err(at)? {
            row.map_err(at)?;
            each(Err(why.clone()))?;
        }
        return Ok(());
    }
    let only = project(schema.get_fields().iter().filter(|f| f.name() == column).cloned().collect())?;
    for row in reader.get_row_iter(Some(only)).map_err(at)? {
        let row = row.map_err(at)?;
        let item = match row.get_column_iter().next().map(|(_, field)| field) {
            Some(Field::Str(text)) => at_most_max_chars(text.clone()),
            Some(field) => Err(format!("not a string: {}", field_kind(field))),
            None => Err(format!("no column '{column}'")),
        };
        each(item)?;
    }
    Ok(())
}

fn field_kind(field: &Field) -> &'static str {
    match field {
        Field::Null => "nothing (null)",
        Field::Bool(_) => "a bool",
        Field::Byte(_) | Field::Short(_) | Field::Int(_) | Field::Long(_) => "a int",
        Field::UByte(_) | Field::UShort(_) | Field::UInt(_) | Field::ULong(_) => "a int",
        Field::Float16(_) | Field::Float(_) | Field::Double(_) => "a float",
        Field::Bytes(_) => "a bytes",
        Field::Decimal(_) => "a Decimal",
        Field::Date(_) => "a date",
        Field::TimeMillis(_) | Field::TimeMicros(_) => "a time",
        Field::TimestampMillis(_) | Field::TimestampMicros(_) => "a datetime",
        Field::Group(_) | Field::MapInternal(_) => "a dict",
        Field::ListInternal(_) => "a list",
        Field::Str(_) => "a str",
    }
}
