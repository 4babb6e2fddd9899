//! `headmap heads --input FILE`: every head's scores for each text of a corpus — a Parquet
//! file's column, a JSONL file's field (or bare strings), a text file's lines — read a batch at
//! a time, each text run alone (`heads::each`), one row per text out: Parquet, CSV or JSON
//! lines. The rows are the ones `headmap.corpus.scores` makes in Python: `id` (the row or line,
//! from 0), `tokens`, `error` (why the model or the reader refused the text; empty otherwise)
//! and a column per score, layer and head, `induction.2.5`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use headmap::heads::each::{each_text, wanted_at, TextScores};
use headmap::heads::{Score, ScoreOptions};
use headmap::run::PlaceInfo;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, FloatType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{load, HeadsArgs, Table};
use read::read;

mod read;

/// Texts run together (over the threads).
const BATCH: usize = 512;

/// Rows a Parquet row group holds, a multiple of [`BATCH`]: a file holds at most 32,767 groups,
/// so groups of a batch each stopped a corpus at 16.7 million texts.
const ROW_GROUP: usize = 32 * BATCH;

/// One row of the corpus as read: its text, or why there is none.
type Item = Result<String, String>;

pub(super) fn heads_over(args: &HeadsArgs, input: &Path) -> Result<(), String> {
    let model = load(&args.input.model)?;
    let info = model.info();
    let place = match args.input.place {
        Some(wanted) => info.places.iter().find(|p| p.place == wanted).ok_or_else(|| {
            let have: Vec<&str> = info.places.iter().map(|p| p.place.name()).collect();
            format!("the model has no {} (it has {})", wanted.name(), have.join(", "))
        })?,
        None => info.places.first().ok_or("the model has no attention")?,
    };
    let wanted = wanted_at(place.place, &args.scores).map_err(|e| e.to_string())?;
    let options = ScoreOptions {
        metric: args.metric,
        exclude_bos: args.exclude_bos,
        exclude_current_token: args.exclude_current_token,
        queries: None,
    };
    let columns = score_columns(&wanted, place);
    let mut out = Out::open(args, &columns)?;
    let mut first = 0usize;
    let mut score = |batch: &mut Vec<Item>| -> Result<(), String> {
        let texts: Vec<String> = batch.iter().filter_map(|t| t.as_ref().ok().cloned()).collect();
        let mut scored = each_text(&model, &texts, place, &wanted, &options).into_iter();
        let rows: Vec<Result<TextScores, String>> = batch
            .drain(..)
            .map(|item| item.and_then(|_| scored.next().expect("one result per text").map_err(|e| e.to_string())))
            .collect();
        let count = rows.len();
        out.rows(first, rows)?;
        first += count;
        Ok(())
    };
    let mut batch = Vec::with_capacity(BATCH);
    read(input, &args.column, &mut |item| {
        batch.push(item);
        if batch.len() == BATCH {
            score(&mut batch)?;
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        score(&mut batch)?;
    }
    out.close()
}

/// `score.layer.head` for every score, layer and head, in the order of the rows' values.
fn score_columns(wanted: &[Score], place: &PlaceInfo) -> Vec<String> {
    let mut names = Vec::with_capacity(wanted.len() * place.layers * place.heads);
    for score in wanted {
        for layer in 0..place.layers {
            for head in 0..place.heads {
                names.push(format!("{}.{layer}.{head}", score.name()));
            }
        }
    }
    names
}

// ---- writing ------------------------------------------------------------------------------

enum Out {
    /// The rows not yet written, the first being row `first` of the corpus.
    Parquet {
        writer: Box<SerializedFileWriter<BufWriter<File>>>,
        pending: Vec<Result<TextScores, String>>,
        first: usize,
    },
    Lines {
        to: Box<dyn Write>,
        csv: bool,
        columns: Vec<String>,
    },
}

impl Out {
    fn open(args: &HeadsArgs, columns: &[String]) -> Result<Out, String> {
        let out = args.output.out.as_deref();
        let create =
            |path: &Path| File::create(path).map(BufWriter::new).map_err(|e| format!("{}: {e}", path.display()));
        if let Some(path) = out.filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))) {
            let writer = SerializedFileWriter::new(
                create(path)?,
                parquet_schema(columns)?,
                Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).build()),
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(Out::Parquet { writer: Box::new(writer), pending: Vec::new(), first: 0 });
        }
        let mut to: Box<dyn Write> = match out {
            Some(path) => Box::new(create(path)?),
            None => Box::new(BufWriter::new(std::io::stdout())),
        };
        // a file named .csv is written as CSV, as one named .parquet is Parquet
        let named_csv = out.is_some_and(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")));
        let csv = named_csv || matches!(args.output.format, Table::Csv);
        if csv {
            writeln!(to, "id,tokens,error,{}", columns.join(",")).map_err(|e| e.to_string())?;
        }
        Ok(Out::Lines { to, csv, columns: columns.to_vec() })
    }

    /// Writes `rows`, the first being row `first` of the corpus.
    fn rows(&mut self, first: usize, rows: Vec<Result<TextScores, String>>) -> Result<(), String> {
        match self {
            Out::Parquet { writer, pending, first: at } => {
                if pending.is_empty() {
                    *at = first;
                }
                pending.extend(rows);
                if pending.len() >= ROW_GROUP {
                    parquet_rows(writer, *at, pending).map_err(|e| e.to_string())?;
                    pending.clear();
                }
                Ok(())
            }
            Out::Lines { to, csv, columns } => {
                for (i, row) in rows.iter().enumerate() {
                    let line =
                        if *csv { csv_row(first + i, row, columns.len()) } else { json_row(first + i, row, columns) };
                    writeln!(to, "{line}").map_err(|e| e.to_string())?;
                }
                Ok(())
            }
        }
    }

    fn close(self) -> Result<(), String> {
        match self {
            Out::Parquet { mut writer, pending, first } => {
                if !pending.is_empty() {
                    parquet_rows(&mut writer, first, &pending).map_err(|e| e.to_string())?;
                }
                writer.close().map(|_| ()).map_err(|e| e.to_string())
            }
            Out::Lines { mut to, .. } => to.flush().map_err(|e| e.to_string()),
        }
    }
}

fn parquet_schema(columns: &[String]) -> Result<Arc<Type>, String> {
    let column = |name: &str, physical, repetition, logical: Option<LogicalType>| {
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .build()
            .map(Arc::new)
    };
    let mut fields = vec![
        column("id", Physical::INT64, Repetition::REQUIRED, None),
        column("tokens", Physical::INT64, Repetition::REQUIRED, None),
        column("error", Physical::BYTE_ARRAY, Repetition::OPTIONAL, Some(LogicalType::String)),
    ];
    fields.extend(columns.iter().map(|name| column(name, Physical::FLOAT, Repetition::OPTIONAL, None)));
    let fields = fields.into_iter().collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    Type::group_type_builder("scores").with_fields(fields).build().map(Arc::new).map_err(|e| e.to_string())
}

/// One row group: `rows`, column by column; a text that erred has no scores (null).
fn parquet_rows(
    writer: &mut SerializedFileWriter<BufWriter<File>>,
    first: usize,
    rows: &[Result<TextScores, String>],
) -> parquet::errors::Result<()> {
    let ids: Vec<i64> = (first..first + rows.len()).map(|i| i as i64).collect();
    let tokens: Vec<i64> = rows.iter().map(|r| r.as_ref().map_or(0, |s| s.tokens as i64)).collect();
    let errors: Vec<ByteArray> =
        rows.iter().filter_map(|r| r.as_ref().err()).map(|e| ByteArray::from(e.as_str())).collect();
    let error_levels: Vec<i16> = rows.iter().map(|r| i16::from(r.is_err())).collect();
    let present: Vec<i16> = rows.iter().map(|r| i16::from(r.is_ok())).collect();
    let mut group = writer.next_row_group()?;
    let mut index = 0usize;
    while let Some(mut column) = group.next_column()? {
        match index {
            0 => column.typed::<Int64Type>().write_batch(&ids, None, None)?,
            1 => column.typed::<Int64Type>().write_batch(&tokens, None, None)?,
            2 => column.typed::<ByteArrayType>().write_batch(&errors, Some(&error_levels), None)?,
            n => {
                let values: Vec<f32> =
                    rows.iter().filter_map(|r| r.as_ref().ok()).map(|s| value_at(s, n - 3)).collect();
                column.typed::<FloatType>().write_batch(&values, Some(&present), None)?
            }
        };
        column.close()?;
        index += 1;
    }
    group.close()?;
    Ok(())
}

/// The `k`-th score column's value of a text: scores in order, each (layers, heads) row-major.
fn value_at(s: &TextScores, k: usize) -> f32 {
    let per = s.scores.first().map_or(1, |t| t.len());
    s.scores[k / per].as_slice().expect("standard layout")[k % per]
}

fn values(s: &TextScores) -> impl Iterator<Item = f32> + '_ {
    s.scores.iter().flat_map(|t| t.iter().copied())
}

fn csv_row(id: usize, row: &Result<TextScores, String>, columns: usize) -> String {
    match row {
        Ok(s) => {
            let numbers: Vec<String> = values(s).map(|v| v.to_string()).collect();
            format!("{id},{},,{}", s.tokens, numbers.join(","))
        }
        Err(e) => format!("{id},0,\"{}\"{}", e.replace('"', "\"\""), ",".repeat(columns)),
    }
}

/// One JSON line: id, tokens, error, then the score columns in order, each number as the
/// command line's JSON writes an f32 (its shortest form), null where the text erred.
fn json_row(id: usize, row: &Result<TextScores, String>, columns: &[String]) -> String {
    let text = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let (tokens, error) = match row {
        Ok(s) => (s.tokens, "null".to_string()),
        Err(e) => (0, text(e)),
    };
    let mut line = format!("{{\"id\":{id},\"tokens\":{tokens},\"error\":{error}");
    let mut numbers = row.as_ref().ok().map(values);
    for name in columns {
        let value = numbers.as_mut().and_then(|n| n.next()).filter(|v| v.is_finite());
        let value =
            value.map_or_else(|| "null".to_string(), |v| serde_json::to_string(&v).expect("a number serializes"));
        line.push_str(&format!(",{}:{value}", text(name)));
    }
    line.push('}');
    line
}
