package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.id.BlockId;
import io.strata.master.MutableClock;
import io.strata.master.file.MasterReplies.UfsSource;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.server.ufs.UfsManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The content fingerprint (an object store's ETag) a master records when it loads a file from the UFS is kept by the
 * journal, replay and checkpoints, and handed to the worker that reads the file's blocks from the UFS, which compares
 * it with the file's status then. A file of a UFS that offers none (a local dir) has "": its length and mtime decide.
 * Real masters over real journals and a local-dir UFS; the object-store load is the journal a master wrote for one
 * (no object store is reachable here).
 */
class UfsContentTagTest {
  private static final long BS = 100;
  private static final String ETAG = "\"5d41402abc4b2a76b9719d911017c592\"";

  @TempDir
  Path tmp;

  private FileSystemMaster open(UfsManager manager, Journal journal) throws Exception {
    return FileSystemMasterUfsTest.open(tmp, tmp.resolve("ufs"), manager, journal,
        new MutableClock(1_700_000_000_000L), Map.of(), 1000);
  }

  @Test
  void aLoadedFilesContentTag_survivesReplayAndCheckpoint_andGoesToTheWorkerWithItsBlocks() throws Exception {
    Files.createDirectories(tmp.resolve("ufs/local"));
    Files.write(tmp.resolve("ufs/local/g"), new byte[150]);
    Path journalDir = tmp.resolve("journal");
    Journal written = new Journal(journalDir, 1 << 20);
    written.replay(e -> { }); // a new journal, as a master starts one
    written.startWriting();
    // What a master journals for a file it loaded from a UFS whose status had an ETag (UfsMerge).
    written.append(List.of(new JournalEntry.Mkdir(1, "/s3", 0755, 1_000, "PERSISTED")));
    written.append(List.of(new JournalEntry.CreateFile(2, "/s3/f", BS, 0644, 1_000, "MUST_CACHE"),
        new JournalEntry.CompleteFile(2, 150, 1_000, "PERSISTED", 1_234, ETAG)));
    written.flush();
    written.close();

    try (UfsManager manager = new UfsManager()) {
      Journal journal = new Journal(journalDir, 1 << 20);
      FileSystemMaster fs = open(manager, journal);
      UfsSource replayed = fs.blockSource(BlockId.of(2, 1)).ufs();
      assertThat(replayed.ufsContentTag()).isEqualTo(ETAG);
      assertThat(replayed.ufsMtimeMs()).isEqualTo(1_234);
      assertThat(replayed.fileLength()).isEqualTo(150);
      assertThat(replayed.offset()).isEqualTo(100);
      FileInfo local = fs.getStatus("/local/g", 0); // loaded from the local dir now: no tag there
      assertThat(fs.blockSource(BlockId.of(local.id(), 0)).ufs().ufsContentTag()).isEmpty();
      fs.checkpoint();
      journal.close();

      Journal again = new Journal(journalDir, 1 << 20);
      try {
        FileSystemMaster fromCheckpoint = open(manager, again);
        assertThat(fromCheckpoint.blockSource(BlockId.of(2, 0)).ufs().ufsContentTag()).isEqualTo(ETAG);
        assertThat(fromCheckpoint.getStatus("/s3/f").ufsContentTag()).isEqualTo(ETAG);
        assertThat(fromCheckpoint.blockSource(BlockId.of(local.id(), 1)).ufs().ufsContentTag()).isEmpty();
      } finally {
        again.close();
      }
    }
  }
}
