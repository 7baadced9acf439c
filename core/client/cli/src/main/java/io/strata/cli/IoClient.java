package io.strata.cli;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * The file API one {@code bench io} path is measured through: the Strata client's own
 * ({@link #of(FileSystem)}) or Hadoop's FileSystem over {@code strata://} ({@link HadoopIoClient}). Writes
 * are MUST_CACHE (the cache's own path, no background persist competing). Thread-safe as the client under
 * it is; each stream it opens is for one thread.
 */
interface IoClient extends Closeable {
  /** A new file at {@code path} (MUST_CACHE, blocks of {@code blockSize}). */
  OutputStream create(String path, long blockSize) throws IOException;

  /** An open file for sequential and positioned reads. */
  Input open(String path) throws IOException;

  /** The Strata client that serves this API (for the bench's probe of which way blocks go). */
  FileSystem strata();

  /** An open file: sequential reads and positioned whole-range reads. */
  interface Input extends Closeable {
    int read(byte[] b) throws IOException;

    void readFully(long position, byte[] b, int off, int len) throws IOException;
  }

  /** The Strata client's own API; closing it closes the client. */
  static IoClient of(FileSystem fs) {
    return new IoClient() {
      @Override
      public OutputStream create(String path, long blockSize) throws IOException {
        return fs.createFile(path, CreateFileOptions.defaults().withBlockSize(blockSize)
            .withWriteType(WriteType.MUST_CACHE));
      }

      @Override
      public Input open(String path) throws IOException {
        FileInStream in = fs.openFile(path);
        return input(in, in::readFully);
      }

      @Override
      public FileSystem strata() {
        return fs;
      }

      @Override
      public void close() throws IOException {
        fs.close();
      }
    };
  }

  /** A positioned read of one stream. */
  @FunctionalInterface
  interface PositionedRead {
    void readFully(long position, byte[] b, int off, int len) throws IOException;
  }

  /** An {@link Input} over a stream and its positioned read. */
  static Input input(InputStream in, PositionedRead pread) {
    return new Input() {
      @Override
      public int read(byte[] b) throws IOException {
        return in.read(b);
      }

      @Override
      public void readFully(long position, byte[] b, int off, int len) throws IOException {
        pread.readFully(position, b, off, len);
      }

      @Override
      public void close() throws IOException {
        in.close();
      }
    };
  }
}
