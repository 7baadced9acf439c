package io.strata.hadoop;

import io.strata.client.ClientKeys;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.Progressable;

/**
 * Hadoop's {@link org.apache.hadoop.fs.FileSystem} for scheme {@code strata}, over the Strata client
 * ({@link io.strata.client.FileSystem}, one shared instance per client configuration from
 * {@link io.strata.client.FileSystem.Factory}, released at {@link #close}). Found through
 * {@code META-INF/services/org.apache.hadoop.fs.FileSystem}; {@link ClientConfs} says how the URI's
 * authority and the Hadoop configuration's {@code strata.*} keys become the client's configuration.
 *
 * <p>Semantics are HDFS's (docs/HADOOP.md has the table): rename into an existing directory moves under
 * it, rename onto an existing file, from a missing source or to a missing parent returns false; a
 * non-recursive delete of a non-empty directory throws {@link PathIsNotEmptyDirectoryException}; the root
 * is never deleted. Not supported: append ({@link UnsupportedOperationException}). Owners, groups, modes and
 * times are stored (not enforced yet). Files carry etags ({@link StrataFileStatus}). Replication is accepted and ignored
 * (Strata keeps as many cached copies as its policies decide). hflush/hsync publish nothing before close
 * (see {@link StrataOutputStream}).
 *
 * <p>{@link #close} first closes (completes) every output stream still open, as HDFS's does
 * ({@code DFSClient.closeAllFilesBeingWritten}): a program that closes its file system (or lets the JVM's
 * shutdown hook do it) without closing its streams keeps its files, instead of leaving them incomplete until
 * lease recovery deletes them.
 *
 * <p>Thread-safe, as Hadoop file systems are shared by every thread of a process; the mutable state is the
 * working directory (volatile) and the set of open output streams (concurrent). The streams it returns are for
 * one thread at a time.
 */
public class StrataFileSystem extends org.apache.hadoop.fs.FileSystem implements LeaseRecoverable {
  public static final String SCHEME = "strata";

  private URI uri;
  private io.strata.client.FileSystem fs;
  private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
  /** Output streams created here and not closed or aborted yet: {@link #close} completes them. */
  private final java.util.Set<StrataOutputStream> writing = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private volatile Path workingDir;
  private long defaultBlockSize;
  private String user;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    setConf(conf);
    if (name.getScheme() == null || !SCHEME.equalsIgnoreCase(name.getScheme())) {
      throw new IllegalArgumentException("StrataFileSystem serves strata:// URIs, not " + name);
    }
    StrataConf client = ClientConfs.of(name, conf, StrataConf.load());
    this.user = UserGroupInformation.getCurrentUser().getShortUserName();
    if (client.get(ClientKeys.LOGIN_NAME).isEmpty()) {
      // As HDFS: new files and directories belong to Hadoop's user (HADOOP_USER_NAME, Kerberos, ...).
      client = client.with(ClientKeys.LOGIN_NAME, user);
    }
    this.uri = URI.create(SCHEME + "://" + (name.getRawAuthority() == null ? "" : name.getRawAuthority()) + "/");
    this.defaultBlockSize = client.get(ClientKeys.BLOCK_SIZE_DEFAULT);
    this.fs = io.strata.client.FileSystem.Factory.get(client);
    this.workingDir = getHomeDirectory();
  }

  /** The Strata client this file system uses (shared; do not close it). */
  public io.strata.client.FileSystem client() {
    return fs;
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public URI getUri() {
    return uri;
  }

  @Override
  protected int getDefaultPort() {
    return Integer.parseInt(CommonKeys.MASTER_RPC_PORT.defaultValue());
  }

  /** {@code strata.user.block.size.default} of the client's configuration. */
  @Override
  public long getDefaultBlockSize(Path path) {
    return defaultBlockSize;
  }

  @Deprecated
  @Override
  public long getDefaultBlockSize() {
    return defaultBlockSize;
  }

  /** 1: replication is accepted and ignored (Strata's policies decide how many copies are cached). */
  @Override
  public short getDefaultReplication(Path path) {
    return 1;
  }

  @Deprecated
  @Override
  public short getDefaultReplication() {
    return 1;
  }

  /** {@code /user/<name>} of Hadoop's current user, as in HDFS. */
  @Override
  public Path getHomeDirectory() {
    return makeQualified(new Path(USER_HOME_PREFIX + "/" + user));
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = makeQualified(dir.isAbsolute() ? dir : new Path(workingDir, dir));
  }

  /** The Strata path of a Hadoop path: qualified against this file system and its working directory. */
  String strataPath(Path path) {
    Path qualified = makeQualified(path);
    String p = qualified.toUri().getPath();
    return p.isEmpty() ? "/" : p;
  }

  private Path qualify(String strataPath) {
    return new Path(uri.getScheme(), uri.getAuthority(), strataPath);
  }

  // ------------------------------------------------------------------ statuses

  StrataFileStatus toFileStatus(URIStatus s) {
    return new StrataFileStatus(s, qualify(s.path()));
  }

  /** The status, or null when nothing is at {@code path}. */
  private URIStatus statusOrNull(String path) throws IOException {
    try {
      return fs.getStatus(path);
    } catch (NotFoundException e) {
      return null;
    }
  }

  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    String p = strataPath(path);
    try {
      return toFileStatus(fs.getStatus(p));
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  private FileNotFoundException fileNotFound(String p, Exception cause) {
    FileNotFoundException e = new FileNotFoundException("File does not exist: " + qualify(p));
    e.initCause(cause);
    return e;
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    String p = strataPath(path);
    try {
      List<URIStatus> list = fs.listStatus(p);
      FileStatus[] out = new FileStatus[list.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = toFileStatus(list.get(i));
      }
      return out;
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
    return new StreamedListing<>(fs, strataPath(path), this::toFileStatus);
  }

  @Override
  protected RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path, PathFilter filter) throws IOException {
    return new StreamedListing<>(fs, strataPath(path), s -> !filter.accept(qualify(s.path())) ? null
        : new StrataFileStatus.Located(toFileStatus(s), s.directory() ? null : locations(s.path(), 0, s.length())));
  }

  @Override
  public ContentSummary getContentSummary(Path path) throws IOException {
    String p = strataPath(path);
    URIStatus top = statusOrNull(p);
    if (top == null) {
      throw fileNotFound(p, null);
    }
    if (!top.directory()) {
      return new ContentSummary.Builder().length(top.length()).fileCount(1).directoryCount(0)
          .spaceConsumed(top.length()).quota(-1).spaceQuota(-1).build();
    }
    long[] counts = {0, 1, 0}; // files, directories (this one too), bytes
    try {
      fs.iterateStatus(p, ListStatusOptions.defaults().withRecursive(true), s -> {
        if (s.directory()) {
          counts[1]++;
        } else {
          counts[0]++;
          counts[2] += s.length();
        }
      });
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
    return new ContentSummary.Builder().length(counts[2]).fileCount(counts[0]).directoryCount(counts[1])
        .spaceConsumed(counts[2]).quota(-1).spaceQuota(-1).build();
  }

  // ------------------------------------------------------------------ block locations

  @Override
  public org.apache.hadoop.fs.BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
      throws IOException {
    if (file == null) {
      return null;
    }
    if (start < 0 || len < 0) {
      throw new IllegalArgumentException("Invalid start or len parameter: start " + start + ", len " + len
          + " for " + file.getPath());
    }
    if (file.isDirectory() || file.getLen() <= start) {
      return new org.apache.hadoop.fs.BlockLocation[0];
    }
    return locations(strataPath(file.getPath()), start, len);
  }

  private org.apache.hadoop.fs.BlockLocation[] locations(String p, long start, long len) throws IOException {
    try {
      return BlockLocations.overlapping(fs.getBlockLocations(p), start, len);
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  // ------------------------------------------------------------------ read and write

  @Override
  public FSDataInputStream open(Path path, int bufferSize) throws IOException {
    String p = strataPath(path);
    // From the master, never the metadata cache: a cached "incomplete" would read a file completed since as empty.
    // With its blocks, so the stream opens without a second call.
    URIStatus s;
    try {
      s = fs.getStatusWithBlocks(p);
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
    if (s.directory()) {
      throw new FileNotFoundException("Cannot open " + qualify(p) + ": it is a directory");
    }
    if (!s.complete()) {
      // Nothing of a file is visible before its writer closes it: read as empty, as HDFS reads a file
      // whose first block is still being written.
      return new FSDataInputStream(new StrataInputStream(p, null));
    }
    FileInStream in;
    try {
      in = fs.openFile(s, io.strata.client.options.OpenFileOptions.defaults());
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
    return new FSDataInputStream(new StrataInputStream(p, in));
  }

  @Override
  public FSDataOutputStream create(Path path, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    return create(path, permission, overwrite, blockSize, true);
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path path, FsPermission permission,
      java.util.EnumSet<org.apache.hadoop.fs.CreateFlag> flags, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    return create(path, permission, flags.contains(org.apache.hadoop.fs.CreateFlag.OVERWRITE), blockSize, false);
  }

  private FSDataOutputStream create(Path path, FsPermission permission, boolean overwrite, long blockSize,
      boolean makeParents) throws IOException {
    return createMasked(path, (permission == null ? FsPermission.getFileDefault() : permission)
        .applyUMask(FsPermission.getUMask(getConf())), overwrite, blockSize, makeParents);
  }

  /**
   * FileContext's create ({@link StrataFs}): FileContext applied its own umask already, so {@code absolutePermission}
   * is the file's (applying this configuration's umask again would ignore {@code FileContext.setUMask}).
   */
  @Override
  @SuppressWarnings("deprecation")
  protected FSDataOutputStream primitiveCreate(Path f, FsPermission absolutePermission,
      java.util.EnumSet<org.apache.hadoop.fs.CreateFlag> flag, int bufferSize, short replication, long blockSize,
      Progressable progress, org.apache.hadoop.fs.Options.ChecksumOpt checksumOpt) throws IOException {
    boolean exists = exists(f);
    org.apache.hadoop.fs.CreateFlag.validate(f, exists, flag);
    if (exists && flag.contains(org.apache.hadoop.fs.CreateFlag.APPEND)) {
      return append(f, bufferSize, progress);
    }
    return createMasked(f, absolutePermission == null ? FsPermission.getFileDefault() : absolutePermission,
        flag.contains(org.apache.hadoop.fs.CreateFlag.OVERWRITE), blockSize, true);
  }

  /** FileContext's mkdir: as {@link #primitiveCreate}, the permission is final. */
  @Override
  @SuppressWarnings("deprecation")
  protected boolean primitiveMkdir(Path f, FsPermission absolutePermission) throws IOException {
    return mkdirsExactly(f, absolutePermission == null ? FsPermission.getDirDefault() : absolutePermission);
  }

  /** FileContext's mkdir ({@link StrataFs}); without {@code createParent} the parent must be a directory. */
  @Override
  @SuppressWarnings("deprecation")
  protected void primitiveMkdir(Path f, FsPermission absolutePermission, boolean createParent) throws IOException {
    if (!createParent) {
      FileStatus parent = getFileStatus(f.getParent()); // FileNotFoundException when it is missing
      if (!parent.isDirectory()) {
        throw new ParentNotDirectoryException("Cannot make " + makeQualified(f) + ": its parent is a file");
      }
    }
    if (!primitiveMkdir(f, absolutePermission)) {
      throw new IOException("Cannot make directory " + makeQualified(f));
    }
  }

  /** Creates the file with {@code masked} as its permission. */
  private FSDataOutputStream createMasked(Path path, FsPermission masked, boolean overwrite, long blockSize,
      boolean makeParents) throws IOException {
    String p = strataPath(path);
    URIStatus existing = statusOrNull(p);
    if (existing != null) {
      if (existing.directory()) {
        throw new FileAlreadyExistsException("Cannot create " + qualify(p) + ": it is a directory");
      }
      if (!overwrite) {
        throw new FileAlreadyExistsException("Cannot create " + qualify(p) + ": the file exists "
            + "(and overwrite is false)");
      }
      delete(p, false);
    }
    CreateFileOptions options = CreateFileOptions.defaults().withRecursive(makeParents)
        .withMode(masked.toShort() & 07777).withBlockSize(blockSize > 0 ? blockSize : 0);
    FileOutStream out;
    try {
      out = fs.createFile(p, options);
    } catch (FailedPreconditionException e) {
      throw parentNotDirectory(p, e);
    } catch (NotFoundException e) {
      FileNotFoundException fnf = new FileNotFoundException("Cannot create " + qualify(p)
          + ": its parent directory does not exist");
      fnf.initCause(e);
      throw fnf;
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
    StrataOutputStream s = new StrataOutputStream(p, out, writing::remove);
    writing.add(s);
    return new FSDataOutputStream(s, statistics);
  }

  /**
   * What a FAILED_PRECONDITION of a create, mkdir or rename into {@code p} means: a
   * {@link ParentNotDirectoryException} naming the ancestor that is a file, when there is one; else the
   * error as it came.
   */
  private IOException parentNotDirectory(String p, StrataException e) throws IOException {
    for (String a = parent(p); a != null; a = parent(a)) {
      URIStatus s = statusOrNull(a);
      if (s != null && !s.directory()) {
        ParentNotDirectoryException out = new ParentNotDirectoryException("Cannot make " + qualify(p) + ": "
            + qualify(a) + " is a file, not a directory");
        out.initCause(e);
        return out;
      }
    }
    return HadoopErrors.translate(e);
  }

  private static String parent(String p) {
    if (p.equals("/")) {
      return null;
    }
    int slash = p.lastIndexOf('/');
    return slash == 0 ? "/" : p.substring(0, slash);
  }

  @Override
  public FSDataOutputStream append(Path path, int bufferSize, Progressable progress) throws IOException {
    throw new UnsupportedOperationException("Cannot append to " + makeQualified(path) + ": Strata does not "
        + "support append (a file is written once, by one writer, and is immutable once closed)");
  }

  // ------------------------------------------------------------------ namespace

  @Override
  public boolean mkdirs(Path path, FsPermission permission) throws IOException {
    return mkdirsExactly(path, (permission == null ? FsPermission.getDirDefault() : permission)
        .applyUMask(FsPermission.getUMask(getConf())));
  }

  /** Makes the directory (and missing parents) with {@code masked} as its permission. */
  private boolean mkdirsExactly(Path path, FsPermission masked) throws IOException {
    String p = strataPath(path);
    try {
      fs.createDirectory(p, CreateDirectoryOptions.defaults().withRecursive(true).withAllowExists(true)
          .withMode(masked.toShort() & 07777));
      return true;
    } catch (AlreadyExistsException e) {
      FileAlreadyExistsException out = new FileAlreadyExistsException("Cannot make directory " + qualify(p)
          + ": a file exists there");
      out.initCause(e);
      throw out;
    } catch (FailedPreconditionException e) {
      throw parentNotDirectory(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    return delete(strataPath(path), recursive);
  }

  private boolean delete(String p, boolean recursive) throws IOException {
    if (p.equals("/")) {
      // As HDFS: the root itself is never deleted; a non-recursive delete of a non-empty root still says why.
      if (!recursive && !fs.listStatus("/").isEmpty()) {
        throw new PathIsNotEmptyDirectoryException(qualify(p).toString());
      }
      return false;
    }
    try {
      fs.delete(p, DeleteOptions.defaults().withRecursive(recursive));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (DirectoryNotEmptyException e) {
      PathIsNotEmptyDirectoryException out = new PathIsNotEmptyDirectoryException(qualify(p).toString());
      out.initCause(e);
      throw out;
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * HDFS's rename: false (nothing changed) when the source is missing or the root, the destination's parent
   * is missing or a file, the destination is an existing file, or the destination is the source's own
   * subtree; a destination that is an existing directory receives the source under its name. Renaming a
   * path onto itself is a no-op that returns true for a file and false for a directory, as in HDFS.
   */
  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    String s = strataPath(src);
    String d = strataPath(dst);
    if (s.equals("/")) {
      return false;
    }
    URIStatus source = statusOrNull(s);
    if (source == null) {
      return false;
    }
    URIStatus target = statusOrNull(d);
    if (target != null && target.directory() && !s.equals(d)) {
      d = d.equals("/") ? "/" + source.name() : d + "/" + source.name();
      target = statusOrNull(d);
    }
    if (s.equals(d)) {
      return source.isFile();
    }
    if (target != null || d.startsWith(s + "/")) {
      return false;
    }
    String parent = parent(d);
    URIStatus parentStatus = statusOrNull(parent);
    if (parentStatus == null || !parentStatus.directory()) {
      return false;
    }
    try {
      fs.rename(s, d);
      return true;
    } catch (NotFoundException | AlreadyExistsException | FailedPreconditionException e) {
      return false; // changed under us between the checks and the rename: nothing was renamed
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  // ------------------------------------------------------------------ leases

  /**
   * True when the file is closed. Strata cannot take over a file another writer still holds: its master
   * recovers such a file when the writer's lease runs out ({@code strata.master.lease.timeout}), by deleting
   * it, since nothing of an unclosed file was ever published. Until then this returns false.
   */
  @Override
  public boolean recoverLease(Path file) throws IOException {
    return isFileClosed(file);
  }

  @Override
  public boolean isFileClosed(Path file) throws IOException {
    String p = strataPath(file);
    URIStatus s = statusOrNull(p);
    if (s == null) {
      throw fileNotFound(p, null);
    }
    if (s.directory()) {
      throw new FileNotFoundException("Path is not a file: " + qualify(p));
    }
    return s.complete();
  }

  // ------------------------------------------------------------------ attributes

  /**
   * Changes the owner, the group, or both (null leaves one as it is; both null is refused, as in HDFS).
   * Strata stores owners, groups and modes but does not enforce them yet.
   */
  @Override
  public void setOwner(Path path, String user, String group) throws IOException {
    if (user == null && group == null) {
      throw new IOException("Cannot set the owner of " + makeQualified(path) + ": both user and group are null");
    }
    SetAttributeOptions o = SetAttributeOptions.defaults();
    if (user != null) {
      o = o.withOwner(user);
    }
    if (group != null) {
      o = o.withGroup(group);
    }
    setAttribute(path, o);
  }

  @Override
  public void setPermission(Path path, FsPermission permission) throws IOException {
    setAttribute(path, SetAttributeOptions.defaults().withMode(permission.toShort() & 07777));
  }

  /** Sets the modification and access times in ms since the epoch; -1 leaves a time as it is. */
  @Override
  public void setTimes(Path path, long mtime, long atime) throws IOException {
    setAttribute(path, SetAttributeOptions.defaults().withModificationTimeMs(mtime).withAccessTimeMs(atime));
  }

  private void setAttribute(Path path, SetAttributeOptions options) throws IOException {
    String p = strataPath(path);
    try {
      fs.setAttribute(p, options);
    } catch (NotFoundException e) {
      throw fileNotFound(p, e);
    } catch (StrataException e) {
      throw HadoopErrors.translate(e);
    }
  }

  // ------------------------------------------------------------------ capabilities and lifecycle

  @Override
  public boolean hasPathCapability(Path path, String capability) throws IOException {
    switch (org.apache.hadoop.fs.impl.PathCapabilitiesSupport.validatePathCapabilityArgs(makeQualified(path), capability)) {
      case CommonPathCapabilities.BULK_DELETE:
      case CommonPathCapabilities.LEASE_RECOVERABLE:
      case CommonPathCapabilities.FS_PERMISSIONS:
      case CommonPathCapabilities.ETAGS_AVAILABLE:
      case CommonPathCapabilities.ETAGS_PRESERVED_IN_RENAME:
        return true;
      case CommonPathCapabilities.FS_APPEND:
      case CommonPathCapabilities.FS_CONCAT:
      case CommonPathCapabilities.FS_SYMLINKS:
      case CommonPathCapabilities.FS_PATHHANDLES:
      case CommonPathCapabilities.FS_CHECKSUMS:
      case CommonPathCapabilities.FS_TRUNCATE:
      case CommonPathCapabilities.FS_XATTRS:
      case CommonPathCapabilities.FS_ACLS:
      case CommonPathCapabilities.FS_SNAPSHOTS:
      case CommonPathCapabilities.FS_STORAGEPOLICY:
      case CommonPathCapabilities.FS_MULTIPART_UPLOADER:
        return false;
      default:
        return super.hasPathCapability(path, capability);
    }
  }

  @Override
  public String getCanonicalServiceName() {
    return null; // no delegation tokens
  }

  @Override
  public void close() throws IOException {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (StrataOutputStream open : List.copyOf(writing)) {
      try {
        open.close(); // completes the file with what was written, as HDFS's close does
      } catch (IOException | RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(StrataFileSystem.class).warn("Closing the file system: the stream still "
            + "open on {} failed to close: {}", open.path(), e.toString());
      }
    }
    try {
      super.close(); // deletes the deleteOnExit paths, so before the client goes
    } finally {
      if (fs != null) {
        fs.close(); // one reference of the shared client
      }
    }
  }

  @Override
  public String toString() {
    return "StrataFileSystem{" + uri + ", working dir " + workingDir + "}";
  }

}
