package io.strata.tests.ufs;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * Fault injection for under file system tests: the raw local file system, except that a file fails with
 * an IOException once {@code failing.fail.after.bytes} bytes were written to it. Mounted with the mount
 * options {@code fs.file.impl=<this class>} and the byte count, a local dir becomes a disk that breaks in
 * the middle of a write; everything else behaves as the local file system (other mounts keep theirs: each
 * option set gets its own client).
 */
public final class FailingFileSystem extends RawLocalFileSystem {
  private long failAfter = Long.MAX_VALUE;

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(uri, conf);
    failAfter = conf.getLong("failing.fail.after.bytes", Long.MAX_VALUE);
  }

  @Override
  public FSDataOutputStream create(Path f, boolean overwrite, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    return new FSDataOutputStream(new Breaking(super.create(f, overwrite, bufferSize, replication, blockSize,
        progress), failAfter, f), null);
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    FSDataOutputStream real = super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    return new FSDataOutputStream(new Breaking(real, failAfter, f), null);
  }

  /** Passes bytes through until the limit, then fails every write. */
  private static final class Breaking extends FilterOutputStream {
    private final long limit;
    private final Path path;
    private long written;

    Breaking(OutputStream out, long limit, Path path) {
      super(out);
      this.limit = limit;
      this.path = path;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      if (written + len > limit) {
        throw new IOException("Injected failure: the disk under " + path + " broke after " + written + " bytes");
      }
      out.write(b, off, len);
      written += len;
    }
  }
}
