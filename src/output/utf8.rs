//! Incremental lossy UTF-8 decoding, chunk by chunk (step 1 of the pipeline).

/// Incremental lossy UTF-8 decoder.
///
/// Emits `(text, source_bytes)` pieces: valid runs as they are (`source_bytes` =
/// their length) and one U+FFFD per maximal invalid subsequence (`source_bytes` = its
/// length), which is exactly what `String::from_utf8_lossy` produces on the whole
/// input. The only state kept across chunks is an incomplete sequence at the end of
/// a chunk (at most 3 bytes), completed or rejected by the next chunk.
#[derive(Default)]
pub(super) struct Utf8Stream {
    pub(super) pending: [u8; 4],
    pub(super) pending_len: usize,
}

impl Utf8Stream {
    /// Bytes held back as the start of a character that has not ended yet.
    pub(super) fn pending_len(&self) -> usize {
        self.pending_len
    }

    pub(super) fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&str, usize)) {
        // First complete a sequence left incomplete by the previous chunk, one byte at a
        // time: it is at most 3 bytes plus 1, so this costs nothing.
        while self.pending_len > 0 {
            let Some((&byte, rest)) = bytes.split_first() else {
                return;
            };
            if self.pending_len >= self.pending.len() {
                // Cannot happen (an incomplete prefix is at most 3 bytes); reject
                // rather than index out of bounds.
                emit("\u{FFFD}", self.pending_len);
                self.pending_len = 0;
                break;
            }
            self.pending[self.pending_len] = byte;
            self.pending_len += 1;
            match std::str::from_utf8(&self.pending[..self.pending_len]) {
                Ok(text) => {
                    emit(text, self.pending_len);
                    self.pending_len = 0;
                    bytes = rest;
                }
                Err(e) => match e.error_len() {
                    // Still a valid prefix: keep the byte and wait for more.
                    None => bytes = rest,
                    // The new byte broke the sequence. The held bytes were a valid
                    // prefix, so the maximal invalid subsequence is exactly them and
                    // the new byte starts afresh: leave it in `bytes`.
                    Some(_) => {
                        emit("\u{FFFD}", self.pending_len - 1);
                        self.pending_len = 0;
                    }
                },
            }
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    if !text.is_empty() {
                        emit(text, text.len());
                    }
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // `valid_up_to` guarantees this prefix is valid; the re-check
                    // only happens next to invalid bytes and avoids `unsafe`.
                    if let Ok(text) = std::str::from_utf8(&bytes[..valid]) {
                        if !text.is_empty() {
                            emit(text, valid);
                        }
                    }
                    match e.error_len() {
                        Some(len) => {
                            emit("\u{FFFD}", len);
                            bytes = &bytes[valid + len..];
                        }
                        None => {
                            // An incomplete sequence ends the chunk: hold it back.
                            let tail = &bytes[valid..];
                            let n = tail.len().min(self.pending.len() - 1);
                            self.pending[..n].copy_from_slice(&tail[..n]);
                            self.pending_len = n;
                            return;
                        }
                    }
                }
            }
        }
    }

    /// End of input: an incomplete sequence becomes one U+FFFD, as in `from_utf8_lossy`.
    pub(super) fn finish(&mut self, mut emit: impl FnMut(&str, usize)) {
        if self.pending_len > 0 {
            emit("\u{FFFD}", self.pending_len);
            self.pending_len = 0;
        }
    }
}
