package io.strata.client;

import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.GetStatusOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.RenameOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.client.options.TtlAction;
import io.strata.common.conf.StrataConf;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
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

  /**
   * Shared file systems, one per client configuration, reference counted: {@link #get} returns the live
   * instance for an equal configuration (the explicitly set {@code strata.*} values other than
   * {@code strata.worker.*}) and counts one reference; each holder closes it exactly once, and the last
   * close frees its channels and threads. A close after the last one is a no-op; an instance got after that
   * is a new one, which such a stray close cannot free. Thread-safe.
   */
  final class Factory {
    private static final FileSystemCache CACHE = new FileSystemCache();

    private Factory() {}

    /**
     * The shared instance for this configuration, one more reference counted (close it once). While another thread
     * makes the instance for an equal configuration (it connects to the master), waits for that one, at most
     * strata.network.rpc.timeout: past it, DeadlineExceededException naming the key (the next call makes the
     * instance again); interrupted, InterruptedIOException with the interrupt flag kept.
     */
    public static FileSystem get(StrataConf conf) throws IOException {
      return CACHE.get(conf);
    }

    /** References counted to a shared instance (0 once freed, or for one made by create). */
    public static int references(FileSystem fs) {
      return CACHE.references(fs);
    }
  }

  /** A fresh client of the master named by the configuration, owned by the caller alone. */
  static FileSystem create(StrataConf conf) {
    return new BaseFileSystem(new FileSystemContext(conf), null, true);
  }

  /**
   * A client over a context the caller owns and closes after this file system (tests inspect it): closing the file
   * system leaves the context open, for other file systems over it.
   */
  static FileSystem create(FileSystemContext context) {
    return new BaseFileSystem(context, null, false);
  }

  /** Creates a file and returns a stream that writes it; the file is complete once the stream closes. */
  FileOutStream createFile(String path, CreateFileOptions options) throws IOException;

  default FileOutStream createFile(String path) throws IOException {
    return createFile(path, CreateFileOptions.defaults());
  }

  /**
   * Creates a file whose blocks workers write themselves ({@link WorkerWrittenFile}: shuffle partition
   * files); this client holds its lease until it completes or abandons it.
   */
  default WorkerWrittenFile createWorkerWrittenFile(String path, CreateFileOptions options) throws IOException {
    throw new UnsupportedOperationException("This file system does not create worker-written files");
  }

  /**
   * Creates each of {@code paths} as {@link #createWorkerWrittenFile} would, in one master call (one journal
   * flush for all): one outcome per path, in order, a path that could not be created failing alone. Throws
   * only when the call as a whole fails (every retry carries the same request ids, so nothing is created
   * twice). At most {@link WorkerWrittenFile#COMPLETE_ALL_MAX} paths.
   */
  default List<WorkerWrittenFile.Creation> createWorkerWrittenFiles(List<String> paths, CreateFileOptions options)
      throws IOException {
    throw new UnsupportedOperationException("This file system does not create worker-written files");
  }

  /** Opens a complete file for reading, with seek and positioned reads. */
  FileInStream openFile(String path, OpenFileOptions options) throws IOException;

  default FileInStream openFile(String path) throws IOException {
    return openFile(path, OpenFileOptions.defaults());
  }

  /**
   * Opens a complete file from a status with its blocks that {@link #getStatusWithBlocks} gave earlier,
   * without asking the master again (a reader of many small files given their statuses by whoever listed
   * them, as Spark's shuffle reducers are by the driver). The block locations may have gone stale: reads
   * fail over to the other copies and the under file system as with any open. A status without its blocks
   * is opened by its path.
   */
  default FileInStream openFile(URIStatus status, OpenFileOptions options) throws IOException {
    return openFile(status.path(), options);
  }

  /** A file's status with its blocks and their locations now, for {@link #openFile(URIStatus, OpenFileOptions)}. */
  default URIStatus getStatusWithBlocks(String path) throws IOException {
    throw new UnsupportedOperationException("This file system does not give block locations with a status");
  }

  /** The status of a file or directory; with the configured metadata sync interval by default. */
  URIStatus getStatus(String path, GetStatusOptions options) throws IOException;

  default URIStatus getStatus(String path) throws IOException {
    return getStatus(path, GetStatusOptions.defaults());
  }

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

  /**
   * Why this client reaches workers on its host over TCP rather than their data domain sockets (each
   * reason is logged once), oldest first; empty when every local worker is reached by its socket.
   */
  default List<String> domainSocketFallbackReasons() {
    return List.of();
  }

  ClusterInfo getClusterInfo() throws IOException;

  /**
   * Mounts the under file system directory {@code ufsUri} ({@code hdfs://nn:8020/data}, {@code file:///x},
   * {@code s3a://bucket/dir}) at {@code path}, which must not exist yet (its parent must).
   */
  void mount(String path, String ufsUri, MountOptions options) throws IOException;

  default void mount(String path, String ufsUri) throws IOException {
    mount(path, ufsUri, MountOptions.defaults());
  }

  /** Removes a mount and everything Strata holds under it; the under file system keeps its data. */
  void unmount(String path) throws IOException;

  /** Every mount, the root's included when it has one. */
  List<MountInfo> getMountTable() throws IOException;

  /**
   * Removes the cached blocks of the persisted files at or (with {@code recursive}) under {@code path};
   * the under file system keeps the data. Pinned files are skipped unless {@code force} (which unpins).
   */
  FreeResult free(String path, boolean recursive, boolean force) throws IOException;

  /** Changes the attributes {@code options} sets and leaves the others; returns the new status. */
  URIStatus setAttribute(String path, SetAttributeOptions options) throws IOException;

  /** Pins a file (or the files under a directory): its blocks are never evicted. */
  default URIStatus pin(String path) throws IOException {
    return setAttribute(path, SetAttributeOptions.defaults().withPinned(true));
  }

  default URIStatus unpin(String path) throws IOException {
    return setAttribute(path, SetAttributeOptions.defaults().withPinned(false));
  }

  /** Sets a time to live, in ms from the file's creation, and what happens when it runs out. */
  default URIStatus setTtl(String path, long ttlMs, TtlAction action) throws IOException {
    return setAttribute(path, SetAttributeOptions.defaults().withTtlMs(ttlMs).withTtlAction(action));
  }

  default URIStatus unsetTtl(String path) throws IOException {
    return setAttribute(path, SetAttributeOptions.defaults().withTtlMs(SetAttributeOptions.NO_TTL));
  }

  /**
   * Persists a complete file to the under file system now and waits until it is PERSISTED: returns at once
   * when it already is; fails with DEADLINE_EXCEEDED after {@code timeout} (the persist may still finish),
   * DATA_LOSS when the file turns LOST, FAILED_PRECONDITION for a directory.
   */
  URIStatus persist(String path, Duration timeout) throws IOException;

  /**
   * Reads every block of a file with read type CACHE and discards the bytes, so that every block ends up
   * cached (blocks on no worker are read from the under file system and cached). Returns the bytes read.
   */
  default long load(String path) throws IOException {
    return load(path, n -> {});
  }

  /** As {@link #load(String)}, telling {@code bytesRead} the size of each piece as it is read (for progress). */
  long load(String path, java.util.function.LongConsumer bytesRead) throws IOException;

  /** The MD5 of a file's content as 32 lower-case hex digits, read with the configured read type. */
  String checksum(String path) throws IOException;

  /** The configuration this client runs with. */
  StrataConf conf();
}
