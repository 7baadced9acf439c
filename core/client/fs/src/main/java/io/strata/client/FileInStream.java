package io.strata.client;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads a complete file: sequentially (one block stream at a time, opened at the current position),
 * with {@link #seek}, and with positioned reads that leave the position alone. A block whose worker fails
 * is read from the block's next location.
 *
 * <p>Not thread-safe: one reader.
 */
public final class FileInStream extends InputStream {
  private final FileSystemContext context;
  private final URIStatus file;
  private final List<FileBlockInfo> blocks;
  private final Set<WorkerAddress> failedWorkers = new HashSet<>();
  private long pos;
  private BlockReader reader;
  private long readerEnd;
  private boolean closed;

  private final boolean promote;

  FileInStream(FileSystemContext context, URIStatus file, boolean promote) {
    this.context = context;
    this.file = file;
    this.promote = promote;
    this.blocks = file.blocks();
  }

  public long length() {
    return file.length();
  }

  public long getPos() {
    return pos;
  }

  public long remaining() {
    return file.length() - pos;
  }

  @Override
  public int available() {
    return (int) Math.min(Integer.MAX_VALUE, remaining());
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    ensureOpen();
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new IndexOutOfBoundsException("off=" + off + " len=" + len + " array=" + b.length);
    }
    if (len == 0) {
      return 0;
    }
    if (pos >= file.length()) {
      return -1;
    }
    for (int attempt = 0; ; attempt++) {
      if (reader == null) {
        openReaderAt(pos);
      }
      try {
        int n = reader.read(b, off, (int) Math.min(len, readerEnd - pos));
        if (n < 0) {
          reader.close();
          reader = null;
          continue;
        }
        pos += n;
        if (pos == readerEnd) {
          reader.close();
          reader = null;
        }
        return n;
      } catch (UnavailableException | NotFoundException e) {
        failedWorkers.add(reader.worker());
        reader.close();
        reader = null;
        if (attempt >= 3) {
          throw e;
        }
      }
    }
  }

  private FileBlockInfo blockAt(long position) {
    long blockSize = file.blockSize();
    int index = (int) (position / blockSize);
    return blocks.get(index);
  }

  private void openReaderAt(long position) throws IOException {
    FileBlockInfo block = blockAt(position);
    long inBlock = position - block.offset();
    long len = block.length() - inBlock;
    reader = open(block, inBlock, len);
    readerEnd = position + len;
  }

  private BlockReader open(FileBlockInfo block, long offset, long length) throws StrataException {
    WorkerAddress chosen = null;
    String local = context.conf().get(ClientKeys.HOSTNAME);
    for (BlockLocation loc : block.locations()) {
      if (failedWorkers.contains(loc.address())) {
        continue;
      }
      if (chosen == null || (loc.address().host().equals(local) && !chosen.host().equals(local))) {
        chosen = loc.address();
      }
    }
    if (chosen == null) {
      throw new UnavailableException("Block " + block.blockId() + " of " + file.path()
          + " is on no reachable worker (locations: " + block.locations().size() + ", failed: "
          + failedWorkers + ")");
    }
    return new BlockReader(context, chosen, block.blockId(), offset, length, promote);
  }

  /** Moves the position; the next read starts there. */
  public void seek(long position) throws IOException {
    ensureOpen();
    if (position < 0) {
      throw new InvalidArgumentException("Cannot seek to negative position " + position + " in " + file.path());
    }
    if (position > file.length()) {
      throw new OutOfRangeException("Cannot seek to " + position + " in " + file.path() + ": the file has "
          + file.length() + " bytes");
    }
    if (position == pos) {
      return;
    }
    if (reader != null) {
      reader.close();
      reader = null;
    }
    pos = position;
  }

  @Override
  public long skip(long n) throws IOException {
    if (n <= 0) {
      return 0;
    }
    long target = Math.min(file.length(), pos + n);
    long skipped = target - pos;
    seek(target);
    return skipped;
  }

  /**
   * Reads up to len bytes at {@code position} without moving the stream's position; returns -1 when
   * position is at or past the end.
   */
  public int positionedRead(long position, byte[] b, int off, int len) throws IOException {
    ensureOpen();
    if (position < 0) {
      throw new InvalidArgumentException("Negative read position " + position + " in " + file.path());
    }
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new IndexOutOfBoundsException("off=" + off + " len=" + len + " array=" + b.length);
    }
    if (position >= file.length()) {
      return -1;
    }
    int total = (int) Math.min(len, file.length() - position);
    int done = 0;
    while (done < total) {
      long p = position + done;
      FileBlockInfo block = blockAt(p);
      long inBlock = p - block.offset();
      int n = (int) Math.min(total - done, block.length() - inBlock);
      for (int attempt = 0; ; attempt++) {
        try (BlockReader r = open(block, inBlock, n)) {
          try {
            r.readFully(b, off + done, n);
            break;
          } catch (UnavailableException | NotFoundException e) {
            failedWorkers.add(r.worker());
            if (attempt >= 3) {
              throw e;
            }
          }
        }
      }
      done += n;
    }
    return total;
  }

  /** Reads exactly len bytes at position or fails with OutOfRangeException. */
  public void readFully(long position, byte[] b, int off, int len) throws IOException {
    if (position < 0 || position + len > file.length()) {
      throw new OutOfRangeException("Cannot read " + len + " bytes at " + position + " of " + file.path()
          + ": the file has " + file.length() + " bytes");
    }
    positionedRead(position, b, off, len);
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new IOException("The stream reading " + file.path() + " is closed");
    }
  }

  @Override
  public void close() {
    if (reader != null) {
      reader.close();
      reader = null;
    }
    closed = true;
  }
}
