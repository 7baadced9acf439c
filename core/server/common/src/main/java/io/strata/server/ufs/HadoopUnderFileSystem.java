package io.strata.server.ufs;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * An {@link UnderFileSystem} over Hadoop's {@link FileSystem} API, so any scheme Hadoop has a client for
 * works: {@code file:} (the raw local file system: no {@code .crc} side files), {@code hdfs:}, and
 * {@code s3a:} once hadoop-aws is on the classpath. Each instance owns its own Hadoop client (never
 * Hadoop's shared cache), configured from the mount's options, and closes it on {@link #close()}.
 *
 * <p>Thread-safe (Hadoop file system clients are).
 */
final class HadoopUnderFileSystem implements UnderFileSystem {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HadoopUnderFileSystem.class);
  /** Object stores whose rename copies the object (a new mtime), by Hadoop scheme. */
  private static final java.util.Set<String> RENAME_COPIES = java.util.Set.of("s3a", "s3", "s3n", "gs", "abfs", "abfss",
      "wasb", "wasbs", "oss", "cosn", "obs");
  private final FileSystem fs;
  private final boolean local;
  private final boolean mtimeTracksContent;
  private final URI root;
  /** Set by {@link #close}: every call then fails, on every scheme alike (Hadoop's local client would go on). */
  private volatile boolean closed;

  HadoopUnderFileSystem(URI root, Map<String, String> options) throws IOException {
    this.fs = FileSystem.newInstance(root, configuration(options));
    this.root = root;
    this.local = "file".equals(root.getScheme());
    String scheme = root.getScheme() == null ? "file" : root.getScheme().toLowerCase(java.util.Locale.ROOT);
    this.mtimeTracksContent = !RENAME_COPIES.contains(scheme);
  }

  @Override
  public boolean mtimeTracksContent() {
    return mtimeTracksContent;
  }

  /**
   * Hadoop's defaults, then settings that make an unreachable HDFS fail in seconds instead of retrying
   * for minutes (an operator can override each through the mount options), then the mount's options.
   */
  static Configuration configuration(Map<String, String> options) {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", org.apache.hadoop.fs.RawLocalFileSystem.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    // A refused connection fails at once already; these bound a NameNode that does not answer the connect
    // (by default 45 tries of 20 s). The retry policy would retry a refused connection for minutes.
    conf.setInt("ipc.client.connect.timeout", 2000);
    conf.setInt("ipc.client.connect.max.retries.on.timeouts", 0);
    conf.setBoolean("dfs.client.retry.policy.enabled", false);
    for (Map.Entry<String, String> e : options.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    return conf;
  }

  /**
   * The file system when it is Hadoop's plain local one, which some calls bypass for the OS's own; null otherwise,
   * also for a subclass (fault-injecting tests override its calls, which a bypass would skip).
   */
  private org.apache.hadoop.fs.RawLocalFileSystem plainLocal() {
    return fs.getClass() == org.apache.hadoop.fs.RawLocalFileSystem.class
        ? (org.apache.hadoop.fs.RawLocalFileSystem) fs : null;
  }

  /** Fails once this client is closed, as HDFS's does ("Filesystem closed"), so a use after close shows. */
  private void checkOpen(String path) throws IOException {
    if (closed) {
      throw new IOException("Cannot use " + path + ": the under file system client of " + root + " is closed");
    }
  }

  @Override
  public UfsStatus getStatus(String path) throws IOException {
    checkOpen(path);
    Path p = new Path(path);
    org.apache.hadoop.fs.RawLocalFileSystem raw = plainLocal();
    if (raw != null) {
      // Two stats for what Strata takes of a local file's status (name, kind, length, modification time), where
      // Hadoop's local getFileStatus makes five and builds qualified Paths (a master completing a file looks twice);
      // a miss (a create of a new name looks first) is one stat, with no exception built (Hadoop's
      // FileNotFoundException, or NIO's NoSuchFileException). Links followed, as Hadoop's java.io.File-based status
      // does.
      java.io.File f = raw.pathToFile(p);
      if (!f.exists()) {
        return null; // also a parent that is a file, or one this process may not search: absent, as for Hadoop
      }
      java.nio.file.attribute.BasicFileAttributes a;
      try {
        a = java.nio.file.Files.readAttributes(f.toPath(), java.nio.file.attribute.BasicFileAttributes.class);
      } catch (java.nio.file.NoSuchFileException e) {
        return null; // removed since
      }
      return new UfsStatus(p.getName(), a.isDirectory(), a.isDirectory() ? 0 : a.size(),
          a.lastModifiedTime().toMillis(), 0, "", "");
    }
    try {
      return toStatus(fs.getFileStatus(p));
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  private UfsStatus toStatus(FileStatus s) {
    int mode = 0;
    String owner = "";
    String group = "";
    // The local file system loads permissions lazily by running ls per file (and fails if the file is
    // gone by then): Strata does not use local owners, so it never asks.
    if (!local) {
      try {
        mode = s.getPermission() == null ? 0 : s.getPermission().toShort() & 07777;
        owner = s.getOwner() == null ? "" : s.getOwner();
        group = s.getGroup() == null ? "" : s.getGroup();
      } catch (RuntimeException e) {
        // attributes are informational; the entry itself is what matters
      }
    }
    return new UfsStatus(s.getPath().getName(), s.isDirectory(), s.isDirectory() ? 0 : s.getLen(),
        s.getModificationTime(), mode, owner, group, s.isDirectory() ? "" : contentTag(s));
  }

  /** The ETag of a status whose file system offers one (S3A, ABFS: {@link org.apache.hadoop.fs.EtagSource}), else "". */
  static String contentTag(FileStatus s) {
    if (s instanceof org.apache.hadoop.fs.EtagSource e) {
      String tag = e.getEtag();
      return tag == null ? "" : tag;
    }
    return "";
  }

  @Override
  public List<UfsStatus> listStatus(String path) throws IOException {
    checkOpen(path);
    FileStatus[] entries;
    try {
      Path p = new Path(path);
      if (!fs.getFileStatus(p).isDirectory()) {
        return null;
      }
      entries = fs.listStatus(p);
    } catch (FileNotFoundException e) {
      return null;
    }
    List<UfsStatus> out = new ArrayList<>(entries.length);
    for (FileStatus s : entries) {
      out.add(toStatus(s));
    }
    return out;
  }

  @Override
  public boolean mkdirs(String path) throws IOException {
    checkOpen(path);
    return fs.mkdirs(new Path(path));
  }

  @Override
  public OutputStream create(String path) throws IOException {
    checkOpen(path);
    return new SyncOnClose(fs.create(new Path(path), true));
  }

  @Override
  public OutputStream createNonRecursive(String path) throws IOException {
    checkOpen(path);
    Path p = new Path(path);
    // A check, then a create: Hadoop's createNonRecursive is not implemented alike everywhere (the local
    // file system's still makes parents, and fault-injecting subclasses override create), so the window
    // between the two calls remains; it is the length of one stat, not of a whole persist.
    org.apache.hadoop.fs.RawLocalFileSystem raw = plainLocal();
    if (raw != null) {
      // A local dir: the OS refuses a file whose parent is missing in the same call that creates it, so a
      // delete of the parent racing this create wins (Hadoop's local create makes the parents again).
      java.io.File f = raw.pathToFile(p);
      java.io.FileOutputStream local = new java.io.FileOutputStream(f);
      return new SyncOnClose(local, () -> local.getFD().sync());
    }
    if (p.getParent() != null && !fs.exists(p.getParent())) {
      throw new java.io.FileNotFoundException("The parent directory of " + path + " does not exist");
    }
    return new SyncOnClose(fs.create(p, true));
  }

  /**
   * A UFS file stream whose close first makes the bytes durable where the file system can
   * ({@code hsync}: an fsync on a local dir, the datanodes' disks on HDFS; S3A has none and its close is the
   * upload): Strata lets workers evict cached blocks once their file is persisted, so the UFS copy must
   * outlive a power loss. Not thread-safe, as the stream it wraps.
   */
  static final class SyncOnClose extends OutputStream {
    /** Makes what was written durable. */
    @FunctionalInterface
    interface Sync {
      void sync() throws IOException;
    }

    private final OutputStream out;
    private final Sync sync;
    private boolean closed;

    SyncOnClose(org.apache.hadoop.fs.FSDataOutputStream out) {
      this(out, out.hasCapability(org.apache.hadoop.fs.StreamCapabilities.HSYNC) ? out::hsync : null);
    }

    /** {@code sync} null: the stream offers no way to make its bytes durable before close. */
    SyncOnClose(OutputStream out, Sync sync) {
      this.out = out;
      this.sync = sync;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      try {
        if (sync != null) {
          out.flush();
          sync.sync();
        }
      } catch (IOException | RuntimeException e) {
        try {
          out.close();
        } catch (IOException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
      out.close();
    }

    /**
     * Gives the stream up, its file about to be deleted: no sync (nothing of it need survive), and where the stream
     * can abort ({@link org.apache.hadoop.fs.StreamCapabilities#ABORTABLE_STREAM}: S3A) an abort, so nothing
     * buffered is uploaded; else a plain close (HDFS: it still completes the file, which its caller then deletes).
     */
    void abandon() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      if (out instanceof org.apache.hadoop.fs.FSDataOutputStream f
          && f.hasCapability(org.apache.hadoop.fs.StreamCapabilities.ABORTABLE_STREAM)) {
        try {
          f.abort();
          return;
        } catch (UnsupportedOperationException e) {
          // the wrapped stream said it could and then could not: close it
        }
      }
      out.close();
    }
  }

  @Override
  public InputStream open(String path, long offset) throws IOException {
    checkOpen(path);
    FSDataInputStream in = fs.open(new Path(path));
    try {
      if (offset > 0) {
        in.seek(offset);
      }
      return in;
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }

  @Override
  public boolean delete(String path, boolean recursive) throws IOException {
    checkOpen(path);
    return fs.delete(new Path(path), recursive);
  }

  /**
   * Renames; on a plain local file system the directories of both names are synced once it is done, so a copy a
   * rename put in place (a persist's, a CACHE_THROUGH write's), which the master then records as persisted and lets
   * go of its cached blocks for, is still there after a power loss, not back under its temp name.
   */
  @Override
  public boolean rename(String src, String dst) throws IOException {
    checkOpen(src);
    Path from = new Path(src);
    Path to = new Path(dst);
    boolean done = fs.rename(from, to);
    org.apache.hadoop.fs.RawLocalFileSystem raw = plainLocal();
    if (done && raw != null) {
      java.io.File toDir = raw.pathToFile(to).getParentFile();
      java.io.File fromDir = raw.pathToFile(from).getParentFile();
      try {
        syncDir(toDir);
        if (fromDir != null && !fromDir.equals(toDir)) {
          syncDir(fromDir);
        }
      } catch (IOException e) {
        // The rename is done: its callers must not take it for undone (a retry would find the source gone).
        LOG.warn("Renamed {} to {}, but syncing their directories failed: {}", src, dst, e.toString());
      }
    }
    return done;
  }

  private static void syncDir(java.io.File dir) throws IOException {
    if (dir == null) {
      return;
    }
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(dir.toPath(),
        java.nio.file.StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    fs.close();
  }
}
