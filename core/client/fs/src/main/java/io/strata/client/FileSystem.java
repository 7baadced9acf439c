package io.strata.client;

import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.RenameOptions;
import io.strata.common.conf.StrataConf;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The Strata file system as a client sees it. Paths are absolute and normalised ({@code /a/b}); errors
 * are {@link io.strata.common.exception.StrataException} subclasses (NotFoundException,
 * AlreadyExistsException, InvalidPathException, UnavailableException, ...).
 *
 * <p>Thread-safe: one instance may be shared by many threads; the streams it returns are not.
 */
public interface FileSystem extends Closeable {

  /** A client of the master named by the configuration. */
  static FileSystem create(StrataConf conf) {
    return new BaseFileSystem(new FileSystemContext(conf));
  }

  /** Creates a file and returns a stream that writes it; the file is complete once the stream closes. */
  FileOutStream createFile(String path, CreateFileOptions options) throws IOException;

  default FileOutStream createFile(String path) throws IOException {
    return createFile(path, CreateFileOptions.defaults());
  }

  /** Opens a complete file for reading, with seek and positioned reads. */
  FileInStream openFile(String path, OpenFileOptions options) throws IOException;

  default FileInStream openFile(String path) throws IOException {
    return openFile(path, OpenFileOptions.defaults());
  }

  URIStatus getStatus(String path) throws IOException;

  /** The blocks of a file with the workers and tiers that hold each (empty for a directory). */
  List<FileBlockInfo> getBlockLocations(String path) throws IOException;

  /** Streams the entries of a directory (or the file itself) to {@code action} in name order, in batches. */
  void iterateStatus(String path, ListStatusOptions options, Consumer<URIStatus> action) throws IOException;

  default List<URIStatus> listStatus(String path, ListStatusOptions options) throws IOException {
    List<URIStatus> out = new ArrayList<>();
    iterateStatus(path, options, out::add);
    return out;
  }

  default List<URIStatus> listStatus(String path) throws IOException {
    return listStatus(path, ListStatusOptions.defaults());
  }

  void createDirectory(String path, CreateDirectoryOptions options) throws IOException;

  default void createDirectory(String path) throws IOException {
    createDirectory(path, CreateDirectoryOptions.defaults());
  }

  void delete(String path, DeleteOptions options) throws IOException;

  default void delete(String path) throws IOException {
    delete(path, DeleteOptions.defaults());
  }

  /** Renames a file or directory; {@code dst} must not exist and its parent must. */
  void rename(String src, String dst, RenameOptions options) throws IOException;

  default void rename(String src, String dst) throws IOException {
    rename(src, dst, RenameOptions.defaults());
  }

  boolean exists(String path) throws IOException;

  /** The live workers. */
  List<WorkerInfo> getWorkers() throws IOException;

  ClusterInfo getClusterInfo() throws IOException;

  /** The configuration this client runs with. */
  StrataConf conf();
}
