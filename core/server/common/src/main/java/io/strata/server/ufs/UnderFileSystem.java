package io.strata.server.ufs;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;

/**
 * An under file system: the durable store Strata caches (a local dir, HDFS, S3...). Paths are full URIs
 * ({@code file:/data/ufs/a}, {@code hdfs://nn:8020/a}) inside this file system. Failures are
 * {@link IOException}s whose message names the path.
 *
 * <p>Implementations are thread-safe; the streams they return are not.
 */
public interface UnderFileSystem extends Closeable {
  /** The status of {@code path}, or null when nothing is there. */
  UfsStatus getStatus(String path) throws IOException;

  /** The entries of directory {@code path} (names only, no order promised), or null when it is no directory. */
  List<UfsStatus> listStatus(String path) throws IOException;

  /** Creates the directory and its missing parents; true when it exists afterwards. */
  boolean mkdirs(String path) throws IOException;

  /** Creates (or replaces) a file, with missing parents. */
  OutputStream create(String path) throws IOException;

  /**
   * Creates (or replaces) a file whose parent directory must exist already (FileNotFoundException when it
   * does not): a writer racing a delete of its directory fails instead of bringing the directory back.
   */
  OutputStream createNonRecursive(String path) throws IOException;

  /**
   * Gives up {@code out}, a stream of {@link #create} or {@link #createNonRecursive} whose file the caller deletes
   * next: closes it without making its bytes durable (no hsync), aborting it where the stream can (S3A: nothing
   * buffered is uploaded). A plain close for any other stream.
   */
  static void abandon(OutputStream out) throws IOException {
    if (out instanceof HadoopUnderFileSystem.SyncOnClose s) {
      s.abandon();
    } else {
      out.close();
    }
  }

  /** Opens a file for reading at {@code offset}. */
  InputStream open(String path, long offset) throws IOException;

  /** Deletes a file or a directory tree; false when nothing was there. */
  boolean delete(String path, boolean recursive) throws IOException;

  /** Renames; false when the source is missing or the destination exists. */
  boolean rename(String src, String dst) throws IOException;

  /**
   * Whether a file's modification time changes only when its bytes do (file systems: a rename keeps it), so a file
   * whose mtime differs from the one Strata recorded has changed. False for object stores, whose rename copies the
   * object under a new time: there a changed mtime says nothing.
   */
  default boolean mtimeTracksContent() {
    return true;
  }
}
