//! Where the manifest goes: standard output, or the `--output` file, written through a
//! temporary file beside it and renamed over it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::command::{Failure, refused};

/// Where `--output` writes: the path given, or, for a symbolic link, the file it resolves to
/// (so the link stays a link).
#[derive(Debug)]
pub(super) struct Output {
    /// `--output` as given, for messages.
    given: PathBuf,
    /// The file written.
    target: PathBuf,
}

/// The most symbolic links followed from `--output`.
const MAX_LINKS: usize = 40;

/// `--output`'s target file: symbolic links followed; what exists there must be a regular file.
pub(super) fn output_target(path: &Path) -> Result<Output, Failure> {
    let not_regular = || {
        refused(format!(
            "--output '{}' is not a regular file",
            path.display()
        ))
    };
    let mut target = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let metadata = match std::fs::symlink_metadata(&target) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Output {
                    given: path.to_path_buf(),
                    target,
                });
            }
            Err(e) => return Err(refused(format!("cannot write {}: {e}", path.display()))),
        };
        if metadata.file_type().is_symlink() {
            let link = std::fs::read_link(&target)
                .map_err(|e| refused(format!("cannot write {}: {e}", path.display())))?;
            target = match target.parent() {
                Some(parent) if link.is_relative() => parent.join(link),
                _ => link,
            };
        } else if metadata.is_file() {
            return Ok(Output {
                given: path.to_path_buf(),
                target,
            });
        } else {
            return Err(not_regular());
        }
    }
    Err(refused(format!(
        "cannot write {}: more than {MAX_LINKS} symbolic links",
        path.display()
    )))
}

/// Writes the manifest to `output` (through a new temporary file beside its target, renamed over
/// it, so that `--merge X --output X` never leaves half a manifest) or to standard output.
pub(super) fn write(output: Option<&Output>, text: &str) -> Result<(), Failure> {
    let Some(output) = output else {
        return std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(|e| refused(format!("cannot write the manifest: {e}")));
    };
    let cannot =
        |e: std::io::Error| refused(format!("cannot write {}: {e}", output.given.display()));
    // Checked again: the target may have changed since the import began.
    let target = &output_target(&output.given)?.target;
    let mut temporary = target.as_os_str().to_owned();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    // A new file: never one (or a link) that was there before.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(cannot)?;
    let written = (|| {
        if let Ok(metadata) = std::fs::metadata(target) {
            file.set_permissions(metadata.permissions())?;
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, target)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        cannot(e)
    })
}
