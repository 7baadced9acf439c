package io.strata.client;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.conf.StrataConf;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's local page cache ({@code strata.user.client.cache.*}, off by default): fixed-size pages of file
 * data this client read, kept as files in a local directory within a byte quota, indexed by {@link PageIndex}
 * (LRU or LFU). One per {@link FileSystemContext}, shared by its streams ({@link PagedReader} reads through it).
 *
 * <p>Directory layout: {@code <dir>/.lock} (held with an OS file lock while a client uses the directory: a
 * second client that finds it locked runs without the page cache), and one file per page named
 * {@link PageKey#fileName} ({@code <fileId>_<creationTimeMs>_<fileLength>_<modificationTimeMs>_<index>.page}) holding
 * a 16-byte header (magic {@code STPG}, page size, data length, CRC32C of the data, big-endian ints) and then the data:
 * the page size bytes of the file from {@code index * pageSize}, fewer for the file's last page. A page is
 * written to {@code .<name>.<n>.tmp} and renamed onto its name atomically, so a name never holds a
 * half-written page; leftover temp files are deleted at start. Invariants: a page file's data are the bytes of
 * the file its name names (files are immutable once complete, and a rewritten file has another id); the sum of
 * the indexed page files' sizes stays within the quota (past it only between a new page's rename and the
 * eviction {@link #store} then does, by at most one page per storing thread).
 *
 * <p>The directory must be this user's alone to write: a page another user could put there would be served as the
 * file's bytes (a checksum is not a signature). A directory it creates is made {@code rwx------}; one that another
 * user owns, that its group or others may write, or that is named through another user's link is not used (logged). The default,
 * {@code /tmp/strata-client-cache-${user.name}}, is one per user. One context of this JVM at a time holds a
 * directory ({@link #HELD}, by its real path): an OS file lock is the process's, and closing any channel of the lock
 * file would drop it, so a second context here never touches the lock file at all.
 *
 * <p>At start the index is rebuilt from the directory, oldest file first (so under LRU the most recently
 * written pages are the most recent): a file whose name, size or header is wrong (partial, another page size)
 * is deleted; then the quota is applied. Data checksums are checked on every read, not at start: a page that
 * fails is deleted and missed, so the caller reads the bytes from Strata again; a wrong page is never returned.
 *
 * <p>Thread-safe: no lock of this class is held across disk I/O (its monitor guards only {@link #close}); the index's own lock (LRU) is held only to
 * update the map. Reads and stores of the same page by several threads race harmlessly (the same bytes are
 * renamed onto the same name; the loser of a race with an eviction sees a miss). Lock order: none (the index
 * lock is a leaf, and eviction callbacks run after it is released).
 */
final class LocalPageCache implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(LocalPageCache.class);
  static final int MAGIC = 0x53545047;
  static final int HEADER_BYTES = 16;

  /** Directories (real paths) a context of this JVM holds: see the class comment. */
  private static final java.util.Set<Path> HELD = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final Path dir;
  private final int pageSize;
  private final PageIndex index;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final AtomicLong tmpNames = new AtomicLong();
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong misses = new AtomicLong();
  private final AtomicLong corruptPages = new AtomicLong();
  /** Set by close: the directory may belong to another client now, so nothing more is read or stored. */
  private volatile boolean closed;

  private LocalPageCache(Path dir, int pageSize, long quotaBytes, boolean lfu, FileChannel lockChannel,
      FileLock lock) {
    this.dir = dir;
    this.pageSize = pageSize;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.index = lfu ? PageIndex.lfu(quotaBytes, this::delete) : PageIndex.lru(quotaBytes, this::delete);
  }

  /**
   * The page cache {@code conf} asks for, its index rebuilt from the directory; null when it is off, or when
   * the directory cannot be used or another client holds it (logged: this client then reads without it).
   */
  static LocalPageCache open(StrataConf conf) {
    if (!conf.get(ClientKeys.PAGE_CACHE_ENABLED)) {
      return null;
    }
    long pageSize = conf.get(ClientKeys.PAGE_CACHE_PAGE_SIZE);
    long quota = conf.get(ClientKeys.PAGE_CACHE_SIZE);
    if (quota < pageSize + HEADER_BYTES) {
      throw new IllegalArgumentException(ClientKeys.PAGE_CACHE_SIZE.name() + "=" + quota + " is smaller than one "
          + "page (" + ClientKeys.PAGE_CACHE_PAGE_SIZE.name() + "=" + pageSize + " plus a " + HEADER_BYTES
          + "-byte header)");
    }
    Path dir = Path.of(conf.get(ClientKeys.PAGE_CACHE_DIR).replace("${user.name}", System.getProperty("user.name")))
        .toAbsolutePath();
    FileChannel ch = null;
    Path held = null;
    LocalPageCache opened = null;
    try {
      dir = ownDirectory(dir);
      if (dir == null) {
        return null;
      }
      if (!HELD.add(dir)) {
        LOG.warn("The page cache directory {} is in use by another client of this process; this one reads without "
            + "the page cache", dir);
        return null;
      }
      held = dir;
      ch = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      if (!sameOwner(dir, dir.resolve(".lock"))) {
        return null;
      }
      FileLock lock;
      try {
        lock = ch.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        LOG.warn("The page cache directory {} is in use by another client; this one reads without the page cache",
            dir);
        return null;
      }
      LocalPageCache cache = new LocalPageCache(dir, (int) pageSize, quota,
          conf.get(ClientKeys.PAGE_CACHE_EVICTION).equals("LFU"), ch, lock);
      cache.rebuild();
      opened = cache;
      return cache;
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot use the page cache directory {} ({}); reading without the page cache", dir, e.toString());
      return null;
    } finally {
      if (opened == null) { // let go of what this attempt took: the lock's channel, and the directory's claim here
        if (ch != null) {
          try {
            ch.close();
          } catch (IOException ignored) {
            // nothing held
          }
        }
        if (held != null) {
          HELD.remove(held);
        }
      }
    }
  }

  /**
   * The directory's real path, created {@code rwx------} when missing; null (logged) when it is not this user's
   * alone to write: writable by its group or others (where POSIX permissions exist), or named through a link another
   * user made (which could point this client at a directory of this user's where the cache has no business). Who
   * owns it is checked once the lock file is made ({@link #sameOwner}).
   */
  private static Path ownDirectory(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir.getParent() == null ? dir : dir.getParent());
      try {
        Files.createDirectory(dir, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // made meanwhile: checked below like any other
      } catch (UnsupportedOperationException noPosix) {
        Files.createDirectories(dir);
      }
    }
    Path real = dir.toRealPath();
    java.nio.file.attribute.PosixFileAttributeView view =
        Files.getFileAttributeView(real, java.nio.file.attribute.PosixFileAttributeView.class);
    if (view == null) {
      return real;
    }
    java.nio.file.attribute.PosixFileAttributes a = view.readAttributes();
    java.util.Set<java.nio.file.attribute.PosixFilePermission> p = a.permissions();
    if (p.contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
        || p.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
      LOG.warn("The page cache directory {} has permissions {}: another user could put pages there, which this client "
          + "would serve as file data; reading without the page cache (use a directory only its owner may write, set "
          + "in {})", real, java.nio.file.attribute.PosixFilePermissions.toString(p), ClientKeys.PAGE_CACHE_DIR.name());
      return null;
    }
    if (Files.isSymbolicLink(dir)
        && !Files.getOwner(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS).equals(a.owner())) {
      LOG.warn("The page cache directory {} is a link owned by {} to {}, owned by {}; reading without the page cache",
          dir, Files.getOwner(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS).getName(), real, a.owner().getName());
      return null;
    }
    return real;
  }

  /**
   * Whether the directory's owner is this process's user: the owner of the lock file this process just opened (made,
   * or found, in a directory no other user may write), so no user name need be looked up.
   */
  private static boolean sameOwner(Path dir, Path lockFile) throws IOException {
    if (Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class) == null) {
      return true;
    }
    java.nio.file.attribute.UserPrincipal owner = Files.getOwner(dir);
    if (owner.equals(Files.getOwner(lockFile))) {
      return true;
    }
    LOG.warn("The page cache directory {} is owned by {}, not by this client's user ({}); reading without the page "
        + "cache", dir, owner.getName(), Files.getOwner(lockFile).getName());
    return false;
  }

  int pageSize() {
    return pageSize;
  }

  Path dir() {
    return dir;
  }

  long hits() {
    return hits.get();
  }

  long misses() {
    return misses.get();
  }

  /** Pages found corrupt on read (and dropped) since start. */
  long corruptPages() {
    return corruptPages.get();
  }

  /** Bytes of the indexed page files. */
  long bytes() {
    return index.bytes();
  }

  int pages() {
    return index.pages();
  }

  /**
   * Reads page {@code key}, which holds {@code length} bytes, into {@code dst} from 0: true when they are
   * there and pass their checksum; false (a miss) otherwise, and a page found bad is deleted.
   */
  boolean read(PageKey key, byte[] dst, int length) {
    if (closed || !index.touch(key)) {
      misses.incrementAndGet();
      return false;
    }
    Path file = dir.resolve(key.fileName());
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      Header h = Header.read(ch);
      String bad = null;
      if (!h.isPage(pageSize, length) || ch.size() != HEADER_BYTES + (long) length) {
        bad = "wrong header or size";
      } else {
        readFully(ch, ByteBuffer.wrap(dst, 0, length));
        if (ChunkChecksums.crc(dst, 0, length) != h.crc()) {
          bad = "checksum mismatch";
        }
      }
      if (bad == null) {
        hits.incrementAndGet();
        return true;
      }
      corruptPages.incrementAndGet();
      LOG.warn("Page file {} is corrupt ({}); dropped, its bytes are read from Strata again", file, bad);
    } catch (NoSuchFileException e) {
      LOG.debug("Page file {} is gone (evicted meanwhile)", file);
    } catch (IOException e) {
      LOG.warn("Cannot read page file {} ({}); dropped, its bytes are read from Strata again", file, e.toString());
    }
    index.remove(key);
    delete(key);
    misses.incrementAndGet();
    return false;
  }

  /**
   * Stores {@code length} bytes of {@code data} from 0 as page {@code key} (evicting others past the quota).
   * Best effort: a disk error is logged and the page is not kept.
   */
  void store(PageKey key, byte[] data, int length) {
    if (closed) {
      return;
    }
    Path target = dir.resolve(key.fileName());
    Path tmp = dir.resolve("." + key.fileName() + "." + tmpNames.incrementAndGet() + ".tmp");
    ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).putInt(MAGIC).putInt(pageSize).putInt(length)
        .putInt(ChunkChecksums.crc(data, 0, length)).flip();
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        writeFully(ch, header);
        writeFully(ch, ByteBuffer.wrap(data, 0, length));
      }
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      LOG.warn("Cannot store page file {} ({}); the page is not cached", target, e.toString());
      deleteQuietly(tmp);
      return;
    }
    index.add(key, HEADER_BYTES + (long) length);
  }

  /** Indexes the page files found in the directory; deletes temp files and files that are not whole pages. */
  private void rebuild() throws IOException {
    record Found(Path path, PageKey key, long size, long modified) {}
    List<Found> found = new ArrayList<>();
    int dropped = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path p : files) {
        String name = p.getFileName().toString();
        if ((name.endsWith(".tmp") && name.startsWith(".")) || PageKey.isOldLayout(name)) {
          deleteQuietly(p); // a store cut short, or a page named before pages carried their file's creation time
          dropped++;
          continue;
        }
        PageKey key = PageKey.parse(name);
        if (key == null) {
          continue; // not ours (the lock file, or something the user put there): left alone
        }
        try {
          long size = Files.size(p);
          if (!wholePage(p, key, size)) {
            deleteQuietly(p);
            dropped++;
            continue;
          }
          found.add(new Found(p, key, size, Files.getLastModifiedTime(p).toMillis()));
        } catch (IOException e) {
          // One unreadable entry (a dangling link, a file gone meanwhile) costs that entry, not the cache.
          deleteQuietly(p);
          dropped++;
        }
      }
    }
    found.sort(Comparator.comparingLong(Found::modified));
    for (Found f : found) {
      index.add(f.key(), f.size());
    }
    LOG.info("Page cache {}: {} pages ({} bytes) kept from before, {} files dropped", dir, index.pages(),
        index.bytes(), dropped);
  }

  /** True when the file's size and header are those of page {@code key} at this page size. */
  private boolean wholePage(Path p, PageKey key, long size) throws IOException {
    long start = key.index() * pageSize;
    if (start >= key.fileLength()) {
      return false;
    }
    long expected = Math.min(pageSize, key.fileLength() - start);
    if (size != HEADER_BYTES + expected) {
      return false;
    }
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
      return Header.read(ch).isPage(pageSize, expected);
    }
  }

  /** A page file's header: magic, page size, data length, CRC32C of the data. */
  private record Header(int magic, int pageSize, int length, int crc) {
    static Header read(FileChannel ch) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES);
      readFully(ch, b);
      b.flip();
      return new Header(b.getInt(), b.getInt(), b.getInt(), b.getInt());
    }

    boolean isPage(int expectedPageSize, long expectedLength) {
      return magic == MAGIC && pageSize == expectedPageSize && length == expectedLength;
    }
  }

  private void delete(PageKey key) {
    deleteQuietly(dir.resolve(key.fileName()));
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      LOG.warn("Cannot delete page cache file {} ({})", p, e.toString());
    }
  }

  private static void readFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      if (ch.read(b) < 0) {
        throw new java.io.EOFException("page file shorter than its header says");
      }
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  /**
   * Releases the directory (the pages stay for the next client); streams still open read through to Strata
   * from now on and store nothing. A store already past its check may still rename its page in (not indexed
   * by the next client, which sees it only at its own start).
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      lock.release();
      lockChannel.close();
    } catch (IOException e) {
      LOG.warn("Cannot release the page cache directory {} ({})", dir, e.toString());
    } finally {
      HELD.remove(dir);
    }
  }
}
