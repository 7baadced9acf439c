package io.strata.client;

import java.io.EOFException;
import java.io.IOException;

/**
 * The page cache under one {@link FileInStream}: serves its sequential and positioned reads from the pages of
 * {@link LocalPageCache}, and reads a page that is missing (or was found corrupt) whole through {@code raw}, a
 * {@link FileInStream} of the same file without the cache, then stores it. Sequential reads read missing
 * pages sequentially through {@code raw} (consecutive pages continue one block stream); positioned reads read
 * them with {@code raw}'s positioned reads. The page last read stays in memory (one page-size buffer per
 * stream), so small reads within it touch neither disk nor Strata.
 *
 * <p>Not thread-safe: one reader, like its stream.
 */
final class PagedReader {
  private final LocalPageCache cache;
  private final URIStatus file;
  private final FileInStream raw;
  private final int pageSize;
  private byte[] page;
  /** The page held in {@link #page}, -1 for none. */
  private long pageIndex = -1;

  PagedReader(LocalPageCache cache, URIStatus file, FileInStream raw) {
    this.cache = cache;
    this.file = file;
    this.raw = raw;
    this.pageSize = cache.pageSize();
  }

  /** The stream that reads what the pages lack. */
  FileInStream raw() {
    return raw;
  }

  /** Lets go of the page held in memory and of what the raw stream holds ({@link FileInStream#unbuffer}). */
  void unbuffer() {
    page = null;
    pageIndex = -1;
    raw.unbuffer();
  }

  /**
   * Copies up to {@code len} bytes at {@code position} (before the end of the file) into {@code b}; returns how
   * many: {@code len} or what is left of the file, whichever is less.
   */
  int read(long position, byte[] b, int off, int len, boolean sequential) throws IOException {
    int total = (int) Math.min(len, file.length() - position);
    int done = 0;
    while (done < total) {
      long p = position + done;
      long idx = p / pageSize;
      int inPage = (int) (p - idx * pageSize);
      int pageLen = load(idx, sequential);
      int n = Math.min(total - done, pageLen - inPage);
      System.arraycopy(page, inPage, b, off + done, n);
      done += n;
    }
    return total;
  }

  /** Puts page {@code idx} in {@link #page}, from the cache or read from Strata (and stored); its length. */
  private int load(long idx, boolean sequential) throws IOException {
    long start = idx * pageSize;
    int len = (int) Math.min(pageSize, file.length() - start);
    if (pageIndex == idx) {
      return len;
    }
    if (page == null) {
      page = new byte[pageSize];
    }
    pageIndex = -1; // until the buffer holds a whole page again
    PageKey key = new PageKey(file.id(), file.creationTimeMs(), file.length(), file.modificationTimeMs(), idx);
    if (!cache.read(key, page, len)) {
      if (sequential) {
        raw.seek(start);
        for (int got = 0; got < len; ) {
          int n = raw.read(page, got, len - got);
          if (n < 0) {
            throw new EOFException("The file " + file.path() + " ended at " + (start + got) + ", before the "
                + file.length() + " bytes its status lists");
          }
          got += n;
        }
      } else {
        raw.readFully(start, page, 0, len);
      }
      cache.store(key, page, len);
    }
    pageIndex = idx;
    return len;
  }

  void close() {
    raw.close();
  }
}
