package io.strata.master.file;

import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UnderFileSystem;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The UFS directories an operation created on its way (a rename's destination parent, a through-written
 * mkdir and its parents), so that an operation Strata then refuses can remove exactly those and leave
 * the UFS as it found it. Used by one operation on one thread.
 */
final class UfsDirsCreated {
  private static final Logger LOG = LoggerFactory.getLogger(UfsDirsCreated.class);

  private final UnderFileSystem ufs;
  /** Created directories, outermost first. */
  private final List<String> created = new ArrayList<>();

  private UfsDirsCreated(UnderFileSystem ufs) {
    this.ufs = ufs;
  }

  /** Creates {@code dirUri} and its missing parents, remembering which were missing; false if mkdirs failed. */
  static UfsDirsCreated mkdirs(UnderFileSystem ufs, String dirUri) throws IOException {
    UfsDirsCreated out = new UfsDirsCreated(ufs);
    for (String d = dirUri; ufs.getStatus(d) == null; d = UfsManager.parent(d)) {
      out.created.add(0, d);
      if (UfsManager.parent(d).equals(d)) {
        break;
      }
    }
    if (out.created.isEmpty()) {
      return out;
    }
    boolean made;
    try {
      made = ufs.mkdirs(dirUri);
    } catch (IOException | RuntimeException e) {
      out.undo(); // it may have made some of them before it failed
      throw e;
    }
    if (!made) {
      out.undo();
      throw new IOException("mkdirs " + dirUri + " failed");
    }
    return out;
  }

  /**
   * Makes the directory a file's copy is written into (a persist, a through write) for a file that may be
   * deleted or moved meanwhile: when {@code stillWanted} says no once the directories exist, removes what it
   * made and returns false, so a write racing a delete never leaves the deleted directory in the UFS.
   */
  static boolean mkdirsFor(UnderFileSystem ufs, String dirUri, java.util.function.BooleanSupplier stillWanted)
      throws IOException {
    UfsDirsCreated made = mkdirs(ufs, dirUri);
    if (stillWanted.getAsBoolean()) {
      return true;
    }
    made.undo();
    return false;
  }

  /** Removes what {@link #mkdirs} created, innermost first; a directory something else filled stays. */
  void undo() {
    for (int i = created.size() - 1; i >= 0; i--) {
      try {
        if (ufs.getStatus(created.get(i)) == null) {
          continue; // never made (mkdirs failed part way)
        }
        ufs.delete(created.get(i), false);
      } catch (IOException e) {
        LOG.warn("Cannot remove {}, created in the under file system by a refused operation: {}", created.get(i),
            e.toString());
        return;
      }
    }
  }
}
