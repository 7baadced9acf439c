package io.strata.worker.store;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A block store in one directory with a byte quota.
 *
 * <p>Layout: {@code <dir>/blocks/<blockId>} holds committed blocks, one file each, never changed after
 * commit; {@code <dir>/tmp/<blockId>-<uuid>} holds blocks being written. Commit is an atomic rename from
 * tmp to blocks. On start the store indexes {@code blocks/} (files whose name is not a block id are left
 * alone and logged) and empties {@code tmp/}, whose files belong to writers that died with the previous
 * process. File names are only ever built from numeric block ids, so no request can name a path outside
 * the directory.
 *
 * <p>Space: {@code used} counts committed bytes plus bytes appended to temp blocks; a temp block reserves
 * only what it has written, so a block being written never needs twice its size.
 *
 * <p>Thread-safe: the index and counters are guarded by this object's monitor; file I/O runs outside it.
 */
public final class LocalDirBlockStore implements BlockStore {
  private static final Logger LOG = LoggerFactory.getLogger(LocalDirBlockStore.class);

  private final Path blocksDir;
  private final Path tmpDir;
  private final String tier;
  private final long quota;
  private final Map<Long, BlockMeta> committed = new HashMap<>();
  private final Map<Long, Temp> writing = new HashMap<>();
  private long used;

  public LocalDirBlockStore(Path dir, String tier, long quota) throws IOException {
    this.blocksDir = dir.resolve("blocks");
    this.tmpDir = dir.resolve("tmp");
    this.tier = tier;
    this.quota = quota;
    Files.createDirectories(blocksDir);
    Files.createDirectories(tmpDir);
    try (DirectoryStream<Path> tmp = Files.newDirectoryStream(tmpDir)) {
      for (Path p : tmp) {
        Files.deleteIfExists(p);
      }
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(blocksDir)) {
      for (Path p : files) {
        long id;
        try {
          id = Long.parseLong(p.getFileName().toString());
        } catch (NumberFormatException e) {
          LOG.warn("Ignoring {}: not a block file", p);
          continue;
        }
        long len = Files.size(p);
        committed.put(id, new BlockMeta(id, len, tier));
        used += len;
      }
    }
    LOG.info("Block store at {} ({}): {} blocks, {} of {} bytes used", dir, tier, committed.size(), used, quota);
  }

  private final class Temp implements TempBlock {
    final long blockId;
    final long maxLength;
    final Path path;
    final FileChannel channel;
    long length;
    boolean closed;

    Temp(long blockId, long maxLength, Path path, FileChannel channel) {
      this.blockId = blockId;
      this.maxLength = maxLength;
      this.path = path;
      this.channel = channel;
    }

    @Override
    public long blockId() {
      return blockId;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public void append(ByteBuffer data) throws IOException {
      int n = data.remaining();
      if (length + n > maxLength) {
        throw new InvalidArgumentException("Block " + blockId + " would grow to " + (length + n)
            + " bytes, past its declared maximum of " + maxLength);
      }
      reserve(blockId, n);
      try {
        while (data.hasRemaining()) {
          channel.write(data);
        }
      } catch (IOException e) {
        release(n);
        throw e;
      }
      length += n;
    }
  }

  private synchronized void reserve(long blockId, long bytes) throws ResourceExhaustedException {
    if (used + bytes > quota) {
      throw new ResourceExhaustedException("Tier " + tier + " is full: " + used + " of " + quota
          + " bytes used, block " + blockId + " needs " + bytes + " more");
    }
    used += bytes;
  }

  private synchronized void release(long bytes) {
    used -= bytes;
  }

  @Override
  public TempBlock createTemp(long blockId, long maxLength) throws StrataException {
    if (blockId < 0) {
      throw new InvalidArgumentException("Block id " + blockId + " is negative");
    }
    if (maxLength <= 0) {
      throw new InvalidArgumentException("Block " + blockId + ": maximum length " + maxLength + " must be positive");
    }
    if (maxLength > quota) {
      throw new InvalidArgumentException("Block " + blockId + ": maximum length " + maxLength
          + " is larger than this worker's capacity of " + quota + " bytes");
    }
    synchronized (this) {
      if (committed.containsKey(blockId)) {
        throw new AlreadyExistsException("Block " + blockId + " is already committed on this worker");
      }
      if (writing.containsKey(blockId)) {
        throw new AlreadyExistsException("Block " + blockId + " is being written (or removed) by another caller");
      }
      writing.put(blockId, null);
    }
    Path path = tmpDir.resolve(blockId + "-" + UUID.randomUUID());
    try {
      FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      Temp t = new Temp(blockId, maxLength, path, ch);
      synchronized (this) {
        writing.put(blockId, t);
      }
      return t;
    } catch (IOException e) {
      synchronized (this) {
        writing.remove(blockId);
      }
      throw new io.strata.common.exception.InternalException("Cannot create temp block " + blockId + " in "
          + tmpDir + ": " + e.getMessage(), e);
    }
  }

  @Override
  public BlockMeta commit(TempBlock temp) throws IOException {
    Temp t = (Temp) temp;
    if (t.closed) {
      throw new IllegalStateException("Temp block " + t.blockId + " is already closed");
    }
    t.closed = true;
    try {
      t.channel.close();
      Files.move(t.path, blocksDir.resolve(Long.toString(t.blockId)), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      Files.deleteIfExists(t.path);
      synchronized (this) {
        writing.remove(t.blockId);
        used -= t.length;
      }
      throw e;
    }
    BlockMeta meta = new BlockMeta(t.blockId, t.length, tier);
    synchronized (this) {
      writing.remove(t.blockId);
      committed.put(t.blockId, meta);
    }
    return meta;
  }

  @Override
  public void abort(TempBlock temp) {
    Temp t = (Temp) temp;
    if (t.closed) {
      return;
    }
    t.closed = true;
    try {
      t.channel.close();
      Files.deleteIfExists(t.path);
    } catch (IOException e) {
      LOG.warn("Cannot remove temp block {}: {}", t.path, e.toString());
    }
    synchronized (this) {
      writing.remove(t.blockId);
      used -= t.length;
    }
  }

  @Override
  public synchronized BlockMeta get(long blockId) throws StrataException {
    BlockMeta meta = committed.get(blockId);
    if (meta == null) {
      throw new NotFoundException("Block " + blockId + " does not exist on this worker");
    }
    return meta;
  }

  @Override
  public FileChannel openForRead(long blockId) throws IOException {
    get(blockId);
    try {
      return FileChannel.open(blocksDir.resolve(Long.toString(blockId)), StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new NotFoundException("Block " + blockId + " was removed from this worker", e);
    }
  }

  @Override
  public boolean remove(long blockId) throws IOException {
    BlockMeta meta;
    synchronized (this) {
      meta = committed.remove(blockId);
      if (meta == null) {
        return false;
      }
      used -= meta.length();
      // Reserve the id until the file is gone, so a new writer of the same block cannot commit a
      // file that this removal would then delete.
      writing.put(blockId, null);
    }
    try {
      // Readers that opened the file keep reading it: unlink leaves open files intact.
      Files.deleteIfExists(blocksDir.resolve(Long.toString(blockId)));
    } finally {
      synchronized (this) {
        writing.remove(blockId);
      }
    }
    return true;
  }

  @Override
  public synchronized List<BlockMeta> committedBlocks() {
    return new ArrayList<>(committed.values());
  }

  @Override
  public long capacityBytes() {
    return quota;
  }

  @Override
  public synchronized long usedBytes() {
    return used;
  }
}
