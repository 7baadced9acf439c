package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.MutableClock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class InodeTreeTest {
  private static final long T0 = 1_000_000L;
  private static final long BS = 64;
  private static final InodeTree.CompletionCheck ACCEPT = (f, len) -> { };

  private MutableClock clock;
  private InodeTree tree;

  @BeforeEach
  void setUp() {
    clock = new MutableClock(T0);
    tree = new InodeTree(clock);
  }

  private static StrataPath p(String path) throws StrataException {
    return StrataPath.of(path);
  }

  private FileInfo file(String path) throws StrataException {
    return tree.createFile(p(path), BS, true, 0);
  }

  private FileInfo dir(String path) throws StrataException {
    return tree.createDirectory(p(path), true, false, 0);
  }

  private List<String> names(String dir) throws StrataException {
    List<String> out = new ArrayList<>();
    for (FileInfo f : tree.listBatch(p(dir), null, Integer.MAX_VALUE)) {
      out.add(f.name());
    }
    return out;
  }

  // ---- Create ----

  @Test
  void createFile_inExistingDirectory_returnsIncompleteFileWithDefaults() throws Exception {
    dir("/d");
    FileInfo f = tree.createFile(p("/d/f"), BS, false, 0);

    assertThat(f.path()).isEqualTo("/d/f");
    assertThat(f.name()).isEqualTo("f");
    assertThat(f.directory()).isFalse();
    assertThat(f.complete()).isFalse();
    assertThat(f.length()).isZero();
    assertThat(f.blockSize()).isEqualTo(BS);
    assertThat(f.mode()).isEqualTo(0644);
    assertThat(f.owner()).isEqualTo(InodeTree.DEFAULT_OWNER);
    assertThat(f.group()).isEqualTo(InodeTree.DEFAULT_GROUP);
    assertThat(f.id()).isPositive();
    assertThat(tree.getStatus(p("/d/f"))).isEqualTo(f);
    assertThat(tree.getFile(f.id())).isEqualTo(f);
  }

  @Test
  void createFile_withExplicitMode_keepsTheMode() throws Exception {
    assertThat(tree.createFile(p("/f"), BS, false, 0600).mode()).isEqualTo(0600);
  }

  @Test
  void createFile_withoutRecursive_whenParentIsMissing_isRefusedAndCreatesNothing() throws Exception {
    assertThatThrownBy(() -> tree.createFile(p("/a/b/f"), BS, false, 0))
        .isInstanceOf(NotFoundException.class)
        .hasMessageContaining("/a");

    assertThat(tree.exists(p("/a"))).isFalse();
    assertThat(tree.fileCount()).isZero();
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  @Test
  void createFile_recursive_createsEveryMissingAncestorAsDirectory() throws Exception {
    dir("/a");
    tree.createFile(p("/a/b/c/f"), BS, true, 0);

    for (String d : List.of("/a", "/a/b", "/a/b/c")) {
      FileInfo info = tree.getStatus(p(d));
      assertThat(info.directory()).as(d).isTrue();
      assertThat(info.mode()).as(d).isEqualTo(0755);
    }
    assertThat(tree.getStatus(p("/a/b/c/f")).directory()).isFalse();
    assertThat(tree.directoryCount()).isEqualTo(4);
    assertThat(tree.fileCount()).isEqualTo(1);
  }

  @Test
  void createFile_whereAFileOrDirectoryExists_isRefusedAndLeavesTheOriginal() throws Exception {
    FileInfo f = file("/f");
    dir("/d");

    assertThatThrownBy(() -> tree.createFile(p("/f"), BS * 2, false, 0))
        .isInstanceOf(AlreadyExistsException.class);
    assertThatThrownBy(() -> tree.createFile(p("/d"), BS, false, 0))
        .isInstanceOf(AlreadyExistsException.class);

    assertThat(tree.getStatus(p("/f"))).isEqualTo(f);
    assertThat(tree.getStatus(p("/d")).directory()).isTrue();
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(2);
  }

  @Test
  void createFile_atRoot_isRefused() {
    assertThatThrownBy(() -> tree.createFile(StrataPath.ROOT, BS, true, 0))
        .isInstanceOf(AlreadyExistsException.class);
    assertThat(tree.fileCount()).isZero();
  }

  @Test
  void createFile_underAFile_isRefused_recursiveOrNot() throws Exception {
    file("/f");

    assertThatThrownBy(() -> tree.createFile(p("/f/g"), BS, false, 0))
        .isInstanceOf(FailedPreconditionException.class);
    assertThatThrownBy(() -> tree.createFile(p("/f/x/g"), BS, true, 0))
        .isInstanceOf(FailedPreconditionException.class);
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  @Test
  void createDirectory_withoutRecursive_whenParentIsMissing_isRefused() throws Exception {
    assertThatThrownBy(() -> tree.createDirectory(p("/a/b"), false, false, 0))
        .isInstanceOf(NotFoundException.class);
    assertThat(tree.exists(p("/a"))).isFalse();
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  @Test
  void createDirectory_recursive_createsAncestors_andReturnsAnEmptyDirectory() throws Exception {
    FileInfo d = tree.createDirectory(p("/a/b/c"), true, false, 0700);

    assertThat(d.directory()).isTrue();
    assertThat(d.path()).isEqualTo("/a/b/c");
    assertThat(d.childCount()).isZero();
    assertThat(d.mode()).isEqualTo(0700);
    assertThat(tree.getStatus(p("/a/b")).mode()).isEqualTo(0755);
    assertThat(tree.getStatus(p("/a")).childCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(4);
  }

  @Test
  void createDirectory_thatExists_withAllowExists_returnsTheExistingDirectory() throws Exception {
    FileInfo first = dir("/d");
    file("/d/child");

    FileInfo again = tree.createDirectory(p("/d"), false, true, 0700);

    assertThat(again.id()).isEqualTo(first.id());
    assertThat(again.mode()).isEqualTo(0755);
    assertThat(again.childCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(2);
  }

  @Test
  void createDirectory_thatExists_withoutAllowExists_isRefused() throws Exception {
    dir("/d");
    assertThatThrownBy(() -> tree.createDirectory(p("/d"), true, false, 0))
        .isInstanceOf(AlreadyExistsException.class);
    assertThat(tree.directoryCount()).isEqualTo(2);
  }

  @Test
  void createDirectory_whereAFileExists_isRefused_evenWithAllowExists() throws Exception {
    file("/f");
    assertThatThrownBy(() -> tree.createDirectory(p("/f"), true, true, 0))
        .isInstanceOf(AlreadyExistsException.class);
    assertThat(tree.getStatus(p("/f")).directory()).isFalse();
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  @Test
  void createDirectory_ofRoot_isAllowedOnlyWithAllowExists() throws Exception {
    FileInfo root = tree.createDirectory(StrataPath.ROOT, false, true, 0);
    assertThat(root.id()).isZero();
    assertThat(root.path()).isEqualTo("/");
    assertThat(root.directory()).isTrue();

    assertThatThrownBy(() -> tree.createDirectory(StrataPath.ROOT, true, false, 0))
        .isInstanceOf(AlreadyExistsException.class);
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  @Test
  void ids_areDistinctAcrossFilesAndDirectories() throws Exception {
    List<Long> ids = List.of(dir("/a").id(), file("/a/f").id(), dir("/b").id(), file("/b/g").id(), 0L);
    assertThat(ids).doesNotHaveDuplicates();
  }

  // ---- Status ----

  @Test
  void getStatus_ofMissingPath_isNotFound() {
    assertThatThrownBy(() -> tree.getStatus(p("/nope"))).isInstanceOf(NotFoundException.class);
  }

  @Test
  void getStatus_throughAFile_isNotFound() throws Exception {
    file("/f");
    assertThatThrownBy(() -> tree.getStatus(p("/f/x"))).isInstanceOf(NotFoundException.class);
  }

  @Test
  void getStatus_ofDirectory_countsItsChildren() throws Exception {
    file("/d/a");
    file("/d/b");
    dir("/d/c");
    assertThat(tree.getStatus(p("/d")).childCount()).isEqualTo(3);
    assertThat(tree.getStatus(StrataPath.ROOT).childCount()).isEqualTo(1);
  }

  @Test
  void getFile_ofUnknownId_isNull() throws Exception {
    FileInfo d = dir("/d");
    assertThat(tree.getFile(12345)).isNull();
    assertThat(tree.getFile(d.id())).as("directories are not files").isNull();
  }

  @Test
  void exists_isTrueForRootFilesAndDirectories_andFalseOtherwise() throws Exception {
    file("/d/f");
    assertThat(tree.exists(StrataPath.ROOT)).isTrue();
    assertThat(tree.exists(p("/d"))).isTrue();
    assertThat(tree.exists(p("/d/f"))).isTrue();
    assertThat(tree.exists(p("/d/g"))).isFalse();
    assertThat(tree.exists(p("/d/f/x"))).isFalse();
  }

  // ---- ListBatch ----

  /** /d holds files a, c, e and directories b, d, created out of name order. */
  private void populateD() throws Exception {
    for (String n : List.of("c", "a", "e")) {
      file("/d/" + n);
    }
    dir("/d/b");
    dir("/d/d");
  }

  @Test
  void listBatch_returnsChildrenInNameOrder_withFullPaths() throws Exception {
    populateD();
    List<FileInfo> all = tree.listBatch(p("/d"), null, 100);

    assertThat(all).extracting(FileInfo::name).containsExactly("a", "b", "c", "d", "e");
    assertThat(all).extracting(FileInfo::path).containsExactly("/d/a", "/d/b", "/d/c", "/d/d", "/d/e");
    assertThat(all).extracting(FileInfo::directory).containsExactly(false, true, false, true, false);
  }

  @Test
  void listBatch_pagesWithStartAfterAndLimit() throws Exception {
    populateD();
    assertThat(tree.listBatch(p("/d"), null, 2)).extracting(FileInfo::name).containsExactly("a", "b");
    assertThat(tree.listBatch(p("/d"), "b", 2)).extracting(FileInfo::name).containsExactly("c", "d");
    assertThat(tree.listBatch(p("/d"), "d", 2)).extracting(FileInfo::name).containsExactly("e");
    assertThat(tree.listBatch(p("/d"), "e", 2)).isEmpty();
  }

  @Test
  void listBatch_startAfterANameThatIsNotThere_startsAtTheNextName() throws Exception {
    populateD();
    assertThat(tree.listBatch(p("/d"), "bb", 10)).extracting(FileInfo::name).containsExactly("c", "d", "e");
    assertThat(tree.listBatch(p("/d"), "", 1)).extracting(FileInfo::name).containsExactly("a");
  }

  @Test
  void listBatch_ofRoot_buildsPathsWithoutADoubleSlash() throws Exception {
    populateD();
    file("/top");
    assertThat(tree.listBatch(StrataPath.ROOT, null, 10)).extracting(FileInfo::path)
        .containsExactly("/d", "/top");
  }

  @Test
  void listBatch_ofAFile_listsTheFileItself_onlyOnTheFirstPage() throws Exception {
    populateD();
    List<FileInfo> first = tree.listBatch(p("/d/a"), null, 10);
    assertThat(first).extracting(FileInfo::path).containsExactly("/d/a");
    assertThat(first.get(0).directory()).isFalse();

    assertThat(tree.listBatch(p("/d/a"), "a", 10)).isEmpty();
  }

  @Test
  void listBatch_ofEmptyDirectory_isEmpty() throws Exception {
    populateD();
    assertThat(tree.listBatch(p("/d/b"), null, 10)).isEmpty();
  }

  @Test
  void listBatch_ofMissingPath_isNotFound() throws Exception {
    populateD();
    assertThatThrownBy(() -> tree.listBatch(p("/d/zz"), null, 10)).isInstanceOf(NotFoundException.class);
  }

  // ---- Delete ----

  @Test
  void delete_ofFile_returnsItsId_andForgetsIt() throws Exception {
    file("/d/keep");
    FileInfo f = file("/d/f");

    assertThat(tree.delete(p("/d/f"), false)).containsExactly(f.id());

    assertThat(tree.exists(p("/d/f"))).isFalse();
    assertThat(tree.getFile(f.id())).isNull();
    assertThat(names("/d")).containsExactly("keep");
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(2);
  }

  @Test
  void delete_ofEmptyDirectory_withoutRecursive_isAllowed() throws Exception {
    dir("/d");
    assertThat(tree.delete(p("/d"), false)).isEmpty();
    assertThat(tree.exists(p("/d"))).isFalse();
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  @Test
  void delete_ofNonEmptyDirectory_withoutRecursive_isRefused() throws Exception {
    FileInfo f = file("/d/f");

    assertThatThrownBy(() -> tree.delete(p("/d"), false)).isInstanceOf(DirectoryNotEmptyException.class);

    assertThat(tree.getStatus(p("/d/f"))).isEqualTo(f);
    assertThat(tree.getFile(f.id())).isNotNull();
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(2);
  }

  @Test
  void delete_recursive_returnsEveryNestedFileId_andUpdatesCounts() throws Exception {
    FileInfo f1 = file("/d/f1");
    FileInfo f2 = file("/d/sub/f2");
    FileInfo f3 = file("/d/sub/deeper/f3");
    dir("/d/empty");
    FileInfo outside = file("/other/f");

    List<Long> removed = tree.delete(p("/d"), true);

    assertThat(removed).containsExactlyInAnyOrder(f1.id(), f2.id(), f3.id());
    for (long id : removed) {
      assertThat(tree.getFile(id)).isNull();
    }
    assertThat(tree.exists(p("/d"))).isFalse();
    assertThat(tree.getFile(outside.id())).isNotNull();
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).as("root and /other").isEqualTo(2);
  }

  @Test
  void delete_ofRoot_isRefused_evenRecursive() throws Exception {
    file("/f");
    assertThatThrownBy(() -> tree.delete(StrataPath.ROOT, true)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> tree.delete(StrataPath.ROOT, false)).isInstanceOf(InvalidArgumentException.class);
    assertThat(tree.exists(p("/f"))).isTrue();
    assertThat(tree.fileCount()).isEqualTo(1);
  }

  @Test
  void delete_ofMissingPath_isNotFound() {
    assertThatThrownBy(() -> tree.delete(p("/nope"), true)).isInstanceOf(NotFoundException.class);
  }

  @Test
  void delete_thenCreateAgain_givesANewId() throws Exception {
    FileInfo before = file("/f");
    tree.delete(p("/f"), false);
    FileInfo after = file("/f");
    assertThat(after.id()).isNotEqualTo(before.id());
    assertThat(tree.getFile(before.id())).isNull();
  }

  // ---- Rename ----

  @Test
  void rename_ofFile_keepsItsIdAndMovesItsPath() throws Exception {
    FileInfo f = file("/a/f");
    dir("/b");

    tree.rename(p("/a/f"), p("/b/g"));

    assertThat(tree.exists(p("/a/f"))).isFalse();
    FileInfo moved = tree.getStatus(p("/b/g"));
    assertThat(moved.id()).isEqualTo(f.id());
    assertThat(moved.name()).isEqualTo("g");
    assertThat(tree.getFile(f.id()).path()).isEqualTo("/b/g");
    assertThat(names("/a")).isEmpty();
    assertThat(names("/b")).containsExactly("g");
  }

  @Test
  void rename_ofDirectory_movesItsChildrensPaths() throws Exception {
    FileInfo f = file("/a/sub/f");
    FileInfo g = file("/a/g");
    long dirs = tree.directoryCount();
    long files = tree.fileCount();

    tree.rename(p("/a"), p("/z"));

    assertThat(tree.getFile(f.id()).path()).isEqualTo("/z/sub/f");
    assertThat(tree.getFile(g.id()).path()).isEqualTo("/z/g");
    assertThat(tree.listBatch(p("/z"), null, 10)).extracting(FileInfo::path).containsExactly("/z/g", "/z/sub");
    assertThat(tree.getStatus(p("/z/sub/f")).id()).isEqualTo(f.id());
    assertThat(tree.exists(p("/a"))).isFalse();
    assertThat(tree.exists(p("/a/sub/f"))).isFalse();
    assertThat(tree.directoryCount()).isEqualTo(dirs);
    assertThat(tree.fileCount()).isEqualTo(files);
  }

  @Test
  void rename_intoItsOwnSubtree_isRefused() throws Exception {
    dir("/a/b");

    assertThatThrownBy(() -> tree.rename(p("/a"), p("/a/b/c"))).isInstanceOf(InvalidArgumentException.class);

    assertThat(tree.exists(p("/a/b"))).isTrue();
    assertThat(tree.exists(p("/a/b/c"))).isFalse();
  }

  @Test
  void rename_toASiblingWhoseNameStartsWithTheSource_isNotMistakenForTheSubtree() throws Exception {
    file("/a/f");
    tree.rename(p("/a"), p("/ab"));
    assertThat(tree.exists(p("/ab/f"))).isTrue();
    assertThat(tree.exists(p("/a"))).isFalse();
  }

  @Test
  void rename_ontoAnExistingPath_isRefusedAndChangesNothing() throws Exception {
    FileInfo f = file("/f");
    FileInfo g = file("/g");
    dir("/d");

    assertThatThrownBy(() -> tree.rename(p("/f"), p("/g"))).isInstanceOf(AlreadyExistsException.class);
    assertThatThrownBy(() -> tree.rename(p("/f"), p("/d"))).isInstanceOf(AlreadyExistsException.class);

    assertThat(tree.getStatus(p("/f")).id()).isEqualTo(f.id());
    assertThat(tree.getStatus(p("/g")).id()).isEqualTo(g.id());
    assertThat(tree.getStatus(p("/d")).childCount()).isZero();
  }

  @Test
  void rename_whenDestinationParentIsMissing_isNotFound() throws Exception {
    file("/f");
    assertThatThrownBy(() -> tree.rename(p("/f"), p("/no/g"))).isInstanceOf(NotFoundException.class);
    assertThat(tree.exists(p("/f"))).isTrue();
    assertThat(tree.exists(p("/no"))).isFalse();
  }

  @Test
  void rename_whenDestinationParentIsAFile_isRefused() throws Exception {
    file("/f");
    file("/g");
    assertThatThrownBy(() -> tree.rename(p("/f"), p("/g/h"))).isInstanceOf(FailedPreconditionException.class);
    assertThat(tree.exists(p("/f"))).isTrue();
    assertThat(tree.getStatus(p("/g")).directory()).isFalse();
  }

  @Test
  void rename_ofRoot_orOntoRoot_isRefused() throws Exception {
    file("/f");
    assertThatThrownBy(() -> tree.rename(StrataPath.ROOT, p("/x"))).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> tree.rename(p("/f"), StrataPath.ROOT)).isInstanceOf(AlreadyExistsException.class);
    assertThat(tree.exists(p("/f"))).isTrue();
    assertThat(tree.exists(p("/x"))).isFalse();
  }

  @Test
  void rename_ofMissingSource_isNotFound() {
    assertThatThrownBy(() -> tree.rename(p("/nope"), p("/x"))).isInstanceOf(NotFoundException.class);
    assertThat(tree.exists(StrataPath.ROOT)).isTrue();
  }

  // ---- Counts ----

  @Test
  void counts_followEveryKindOfChange() throws Exception {
    assertThat(tree.fileCount()).isZero();
    assertThat(tree.directoryCount()).as("the root").isEqualTo(1);

    file("/a/b/f1");
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(3);

    dir("/a/c");
    assertThat(tree.directoryCount()).isEqualTo(4);

    tree.createDirectory(p("/a/c"), false, true, 0);
    assertThat(tree.directoryCount()).as("allowExists creates nothing").isEqualTo(4);

    file("/a/c/f2");
    tree.rename(p("/a/c"), p("/c"));
    assertThat(tree.fileCount()).isEqualTo(2);
    assertThat(tree.directoryCount()).as("rename moves, never adds").isEqualTo(4);

    tree.completeFile(p("/a/b/f1"), 0, 0, ACCEPT);
    assertThat(tree.fileCount()).isEqualTo(2);

    tree.delete(p("/a/b/f1"), false);
    assertThat(tree.fileCount()).isEqualTo(1);
    assertThat(tree.directoryCount()).isEqualTo(4);

    tree.delete(p("/c"), true);
    assertThat(tree.fileCount()).isZero();
    assertThat(tree.directoryCount()).isEqualTo(3);

    tree.delete(p("/a"), true);
    assertThat(tree.fileCount()).isZero();
    assertThat(tree.directoryCount()).isEqualTo(1);
  }

  // ---- Complete ----

  @Test
  void completeFile_setsLengthAndComplete_andPassesTheFileToTheCheck() throws Exception {
    FileInfo f = file("/f");
    List<FileInfo> checked = new ArrayList<>();
    List<Long> lengths = new ArrayList<>();

    FileInfo done = tree.completeFile(p("/f"), f.id(), 100, (info, len) -> {
      checked.add(info);
      lengths.add(len);
    });

    assertThat(done.complete()).isTrue();
    assertThat(done.length()).isEqualTo(100);
    assertThat(done.id()).isEqualTo(f.id());
    assertThat(tree.getStatus(p("/f"))).isEqualTo(done);
    assertThat(checked).singleElement().satisfies(info -> {
      assertThat(info.id()).isEqualTo(f.id());
      assertThat(info.complete()).as("checked before completion").isFalse();
    });
    assertThat(lengths).containsExactly(100L);
  }

  @Test
  void completeFile_withIdZero_skipsTheIdCheck() throws Exception {
    file("/f");
    assertThat(tree.completeFile(p("/f"), 0, 7, ACCEPT).length()).isEqualTo(7);
  }

  @Test
  void completeFile_withWrongId_isRefused_andLeavesTheFileIncomplete() throws Exception {
    FileInfo f = file("/f");
    assertThatThrownBy(() -> tree.completeFile(p("/f"), f.id() + 1000, 10, ACCEPT))
        .isInstanceOf(FailedPreconditionException.class);
    assertThat(tree.getStatus(p("/f")).complete()).isFalse();
    assertThat(tree.getStatus(p("/f")).length()).isZero();
  }

  @Test
  void completeFile_ofARecreatedPath_withTheOldId_isRefused() throws Exception {
    FileInfo old = file("/f");
    tree.delete(p("/f"), false);
    file("/f");
    assertThatThrownBy(() -> tree.completeFile(p("/f"), old.id(), 0, ACCEPT))
        .isInstanceOf(FailedPreconditionException.class);
    assertThat(tree.getStatus(p("/f")).complete()).isFalse();
  }

  @Test
  void completeFile_twice_isRefused_andKeepsTheFirstLength() throws Exception {
    FileInfo f = file("/f");
    tree.completeFile(p("/f"), f.id(), 10, ACCEPT);

    assertThatThrownBy(() -> tree.completeFile(p("/f"), f.id(), 20, ACCEPT))
        .isInstanceOf(FailedPreconditionException.class);
    assertThat(tree.getStatus(p("/f")).length()).isEqualTo(10);
  }

  @Test
  void completeFile_withNegativeLength_isRefused_beforeTheCheckRuns() throws Exception {
    FileInfo f = file("/f");
    AtomicInteger checks = new AtomicInteger();
    assertThatThrownBy(() -> tree.completeFile(p("/f"), f.id(), -1, (i, l) -> checks.incrementAndGet()))
        .isInstanceOf(InvalidArgumentException.class);
    assertThat(checks).hasValue(0);
    assertThat(tree.getStatus(p("/f")).complete()).isFalse();
  }

  @Test
  void completeFile_vetoedByTheCheck_leavesTheFileIncompleteAndUnchanged() throws Exception {
    FileInfo f = file("/f");
    clock.advanceMillis(500);

    assertThatThrownBy(() -> tree.completeFile(p("/f"), f.id(), 10, (i, l) -> {
      throw new FailedPreconditionException("veto");
    })).isInstanceOf(FailedPreconditionException.class).hasMessage("veto");

    FileInfo after = tree.getStatus(p("/f"));
    assertThat(after.complete()).isFalse();
    assertThat(after.length()).isZero();
    assertThat(after.modificationTimeMs()).isEqualTo(T0);
    // and a later, accepted completion still works
    assertThat(tree.completeFile(p("/f"), f.id(), 10, ACCEPT).complete()).isTrue();
  }

  @Test
  void completeFile_ofDirectory_isRefused() throws Exception {
    dir("/d");
    assertThatThrownBy(() -> tree.completeFile(p("/d"), 0, 0, ACCEPT))
        .isInstanceOf(FailedPreconditionException.class);
  }

  @Test
  void completeFile_ofMissingPath_isNotFound() {
    assertThatThrownBy(() -> tree.completeFile(p("/nope"), 0, 0, ACCEPT)).isInstanceOf(NotFoundException.class);
  }

  // ---- Times ----

  @Test
  void root_isCreatedAtTheClocksTime() throws Exception {
    FileInfo root = tree.getStatus(StrataPath.ROOT);
    assertThat(root.creationTimeMs()).isEqualTo(T0);
    assertThat(root.modificationTimeMs()).isEqualTo(T0);
  }

  @Test
  void createFile_stampsTheFileAndItsParentWithTheClock() throws Exception {
    clock.setMillis(2_000_000);
    FileInfo d = dir("/d");
    assertThat(d.creationTimeMs()).isEqualTo(2_000_000);
    assertThat(d.modificationTimeMs()).isEqualTo(2_000_000);
    assertThat(tree.getStatus(StrataPath.ROOT).modificationTimeMs()).isEqualTo(2_000_000);

    clock.setMillis(3_000_000);
    FileInfo f = file("/d/f");

    assertThat(f.creationTimeMs()).isEqualTo(3_000_000);
    assertThat(f.modificationTimeMs()).isEqualTo(3_000_000);
    FileInfo parent = tree.getStatus(p("/d"));
    assertThat(parent.creationTimeMs()).isEqualTo(2_000_000);
    assertThat(parent.modificationTimeMs()).isEqualTo(3_000_000);
    assertThat(tree.getStatus(StrataPath.ROOT).modificationTimeMs())
        .as("a grandchild does not touch the root").isEqualTo(2_000_000);
  }

  @Test
  void createFile_recursive_stampsEachCreatedAncestor() throws Exception {
    clock.setMillis(5_000);
    file("/a/b/f");
    assertThat(tree.getStatus(p("/a")).creationTimeMs()).isEqualTo(5_000);
    assertThat(tree.getStatus(p("/a")).modificationTimeMs()).isEqualTo(5_000);
    assertThat(tree.getStatus(p("/a/b")).creationTimeMs()).isEqualTo(5_000);
    assertThat(tree.getStatus(StrataPath.ROOT).modificationTimeMs()).isEqualTo(5_000);
  }

  @Test
  void delete_touchesTheParent() throws Exception {
    file("/d/f");
    clock.setMillis(7_000);
    tree.delete(p("/d/f"), false);
    assertThat(tree.getStatus(p("/d")).modificationTimeMs()).isEqualTo(7_000);
    assertThat(tree.getStatus(p("/d")).creationTimeMs()).isEqualTo(T0);
  }

  @Test
  void rename_touchesBothParents_butNotTheMovedInodesCreationTime() throws Exception {
    file("/a/f");
    dir("/b");
    clock.setMillis(8_000);

    tree.rename(p("/a/f"), p("/b/f"));

    assertThat(tree.getStatus(p("/a")).modificationTimeMs()).isEqualTo(8_000);
    assertThat(tree.getStatus(p("/b")).modificationTimeMs()).isEqualTo(8_000);
    assertThat(tree.getStatus(p("/b/f")).creationTimeMs()).isEqualTo(T0);
  }

  @Test
  void completeFile_touchesTheFileOnly() throws Exception {
    FileInfo f = file("/d/f");
    clock.setMillis(9_000);

    FileInfo done = tree.completeFile(p("/d/f"), f.id(), 1, ACCEPT);

    assertThat(done.modificationTimeMs()).isEqualTo(9_000);
    assertThat(done.creationTimeMs()).isEqualTo(T0);
    assertThat(tree.getStatus(p("/d")).modificationTimeMs()).isEqualTo(T0);
  }
}
