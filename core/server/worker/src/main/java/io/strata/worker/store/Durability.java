package io.strata.worker.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How the block store makes a file and a directory entry durable: {@link #FSYNC} in production (the
 * file's {@code fsync}, then its directory's, so a rename survives a crash). The store calls it only for
 * dirs of tiers that keep data across a restart ({@link TierSpec#fsync()}): a commit syncs the block's
 * bytes before it renames the temp file into {@code blocks/} and syncs {@code blocks/} after, before
 * the master learns of the block; a tier move syncs the copy and the target dir before it deletes the
 * source. Tests wrap {@link #FSYNC} to count the calls. Implementations are thread-safe.
 */
public interface Durability {
  /** Forces a file's data and metadata to the device. */
  void syncFile(FileChannel channel) throws IOException;

  /** Forces a directory's entries (creations, renames) to the device. */
  void syncDir(Path dir) throws IOException;

  /** The real thing: {@code FileChannel.force(true)} on the file and on the directory. */
  Durability FSYNC = new Durability() {
    @Override
    public void syncFile(FileChannel channel) throws IOException {
      channel.force(true);
    }

    @Override
    public void syncDir(Path dir) throws IOException {
      try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
        ch.force(true);
      }
    }

    @Override
    public String toString() {
      return "fsync";
    }
  };

  /** Unlinks a file a removal let go of, if it is there (tests wrap it to hold a removal mid-way). */
  default void unlink(Path file) throws IOException {
    java.nio.file.Files.deleteIfExists(file);
  }

  /** Syncs a file by path (a copy made by {@code Files.copy}). */
  default void syncFile(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      syncFile(ch);
    }
  }
}
