package io.strata.master.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * The lock file {@code <journal dir>/LOCK} that keeps a master from starting on a journal another master
 * uses, and {@code format} from wiping a live journal. It is an OS file lock ({@link FileChannel#tryLock}),
 * so a master killed with SIGKILL releases it with its process.
 *
 * <ul>
 *   <li>A single master (no ZooKeeper) holds it <b>exclusively</b> from before it replays the journal until
 *       it closes: a second master on the same journal dir, in this or another process, is refused.</li>
 *   <li>HA masters (ZooKeeper) share one journal dir legitimately: each holds it <b>shared</b> while it
 *       runs, leader or standby. The ZooKeeper election (and the epochs in the journal) decide who writes;
 *       the shared lock only keeps out a single master started by mistake on their dir, and format.</li>
 *   <li>{@code format} takes it exclusively for the time of the wipe, so it refuses while any master runs.</li>
 * </ul>
 *
 * <p>The OS lock is per process, and Java refuses a second lock on one file in one JVM
 * ({@link OverlappingFileLockException}); so the holders in this JVM are counted here (tests run several
 * masters in one JVM): the first shared holder takes the OS lock, the last one releases it. Thread-safe.
 */
public final class JournalLock implements AutoCloseable {
  /** The lock file's name in the journal dir; format leaves it in place. */
  public static final String FILE = "LOCK";

  /** The holders in this JVM, by real journal dir. Guarded by itself. */
  private static final Map<Path, Held> HELD = new HashMap<>();

  private static final class Held {
    final FileChannel channel;
    final FileLock lock;
    final boolean exclusive;
    int holders;

    Held(FileChannel channel, FileLock lock, boolean exclusive) {
      this.channel = channel;
      this.lock = lock;
      this.exclusive = exclusive;
    }
  }

  private final Path key;
  private boolean released;

  private JournalLock(Path key) {
    this.key = key;
  }

  /** Thrown when another master (or a format) holds the journal. */
  public static final class HeldException extends IOException {
    HeldException(String message) {
      super(message);
    }
  }

  /**
   * Takes the lock of {@code dir} (created if missing), exclusive or shared, without waiting; throws
   * {@link HeldException} naming the dir when it is held in a conflicting mode.
   */
  public static JournalLock acquire(Path dir, boolean exclusive) throws IOException {
    Files.createDirectories(dir);
    Path key = dir.toRealPath();
    synchronized (HELD) {
      Held held = HELD.get(key);
      if (held != null) {
        if (exclusive || held.exclusive) {
          throw new HeldException(heldMessage(key));
        }
        held.holders++;
        return new JournalLock(key);
      }
      FileChannel ch = FileChannel.open(key.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = ch.tryLock(0L, Long.MAX_VALUE, !exclusive);
      } catch (OverlappingFileLockException e) {
        lock = null;
      } catch (IOException e) {
        ch.close();
        throw new IOException("Cannot lock " + key.resolve(FILE) + " (the journal dir's file system must "
            + "support file locks): " + e.getMessage(), e);
      } catch (RuntimeException e) {
        ch.close();
        throw e;
      }
      if (lock == null) {
        ch.close();
        throw new HeldException(heldMessage(key));
      }
      Held h = new Held(ch, lock, exclusive);
      h.holders = 1;
      HELD.put(key, h);
      return new JournalLock(key);
    }
  }

  private static String heldMessage(Path dir) {
    return "a master is running on the journal at " + dir + " (it holds " + dir.resolve(FILE)
        + "); stop it first";
  }

  /** True when a master holds the journal at {@code dir} (the lock cannot be taken exclusively now). */
  public static boolean isHeld(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (JournalLock l = acquire(dir, true)) {
      return false;
    } catch (HeldException e) {
      return true;
    }
  }

  /** Releases this holder's share; the OS lock goes with the last holder in this JVM. Idempotent. */
  @Override
  public void close() {
    synchronized (HELD) {
      if (released) {
        return;
      }
      released = true;
      Held h = HELD.get(key);
      if (h == null || --h.holders > 0) {
        return;
      }
      HELD.remove(key);
      try {
        h.lock.release();
      } catch (IOException ignored) {
        // closing the channel below releases it too
      }
      try {
        h.channel.close();
      } catch (IOException ignored) {
        // nothing more to release
      }
    }
  }
}
