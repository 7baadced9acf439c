package io.strata.common.path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.InvalidPathException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StrataPathTest {

  // ---- rules, each broken once ----

  @Test
  void of_rejectsEmptyPath_namingTheRule() {
    assertThatThrownBy(() -> StrataPath.of(""))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("empty")
        .hasMessageContaining("must be absolute");
  }

  @Test
  void of_rejectsNullPath_asEmpty() {
    assertThatThrownBy(() -> StrataPath.of(null))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void of_rejectsRelativePath_namingThePathAndTheRule() {
    assertThatThrownBy(() -> StrataPath.of("dir/file"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'dir/file'")
        .hasMessageContaining("not absolute");
  }

  @Test
  void of_rejectsTrailingSlash_namingThePathAndTheRule() {
    assertThatThrownBy(() -> StrataPath.of("/dir/"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'/dir/'")
        .hasMessageContaining("ends with /");
  }

  @Test
  void of_rejectsDoubleSlashInside_namingThePathAndTheRule() {
    assertThatThrownBy(() -> StrataPath.of("/a//b"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'/a//b'")
        .hasMessageContaining("empty component");
  }

  @Test
  void of_rejectsDoubleSlashAtStart_namingTheRule() {
    assertThatThrownBy(() -> StrataPath.of("//a"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'//a'")
        .hasMessageContaining("empty component");
  }

  @Test
  void of_rejectsDoubleSlashAlone_asTrailingSlash() {
    assertThatThrownBy(() -> StrataPath.of("//"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'//'")
        .hasMessageContaining("ends with /");
  }

  @Test
  void of_rejectsDotDotComponent_namingThePathAndTheRule() {
    assertThatThrownBy(() -> StrataPath.of("/a/../b"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'/a/../b'")
        .hasMessageContaining("'..' component");
  }

  @Test
  void of_rejectsDotDotAsLastComponent_namingTheRule() {
    assertThatThrownBy(() -> StrataPath.of("/a/.."))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'..' component");
  }

  @Test
  void of_rejectsDotComponent_namingThePathAndTheRule() {
    assertThatThrownBy(() -> StrataPath.of("/a/./b"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'/a/./b'")
        .hasMessageContaining("'.' component");
  }

  @Test
  void of_rejectsNulCharacter_namingThePathTheCharacterAndItsIndex() {
    assertThatThrownBy(() -> StrataPath.of("/a\u0000b"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'/a\u0000b'")
        .hasMessageContaining("control character U+0000")
        .hasMessageContaining("at index 2");
  }

  @Test
  void of_rejectsNewline_namingTheCharacter() {
    assertThatThrownBy(() -> StrataPath.of("/dir/fi\nle"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("control character U+000A")
        .hasMessageContaining("at index 7");
  }

  @Test
  void of_rejectsUnitSeparator_theLastC0Control() {
    assertThatThrownBy(() -> StrataPath.of("/x\u001f"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("control character U+001F");
  }

  @Test
  void of_rejectsDelete_U007F() {
    assertThatThrownBy(() -> StrataPath.of("/x\u007fy"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("control character U+007F")
        .hasMessageContaining("at index 2");
  }

  @Test
  void of_acceptsSpaceAndTilde_theNeighboursOfTheControlRanges() throws Exception {
    assertThat(StrataPath.of("/ ~").name()).isEqualTo(" ~");
  }

  @Test
  void of_rejectsPathLongerThanLimit_namingThePathPrefixAndTheLimit() {
    String path = "/" + "d".repeat(200) + ("/" + "x".repeat(200)).repeat(20); // 4221 chars
    assertThat(path.length()).isGreaterThan(StrataPath.MAX_LENGTH);
    assertThatThrownBy(() -> StrataPath.of(path))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining(path.substring(0, 64))
        .hasMessageContaining(path.length() + " characters long")
        .hasMessageContaining("longer than the limit of 4096");
  }

  @Test
  void of_acceptsPathOfExactlyMaxLength_andRejectsOneMore() throws Exception {
    // 16 components of "/" + 255 chars = 16 * 256 = 4096
    String exact = ("/" + "c".repeat(StrataPath.MAX_COMPONENT_LENGTH)).repeat(16);
    assertThat(exact).hasSize(StrataPath.MAX_LENGTH);
    assertThat(StrataPath.of(exact).depth()).isEqualTo(16);

    String tooLong = ("/" + "c".repeat(StrataPath.MAX_COMPONENT_LENGTH)).repeat(15)
        + "/" + "c".repeat(254) + "/a";
    assertThat(tooLong).hasSize(StrataPath.MAX_LENGTH + 1);
    assertThatThrownBy(() -> StrataPath.of(tooLong))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("longer than the limit of 4096");
  }

  @Test
  void of_rejectsComponentLongerThanLimit_namingTheComponentAndTheLimit() {
    String longName = "n".repeat(StrataPath.MAX_COMPONENT_LENGTH + 1);
    String path = "/dir/" + longName;
    assertThatThrownBy(() -> StrataPath.of(path))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'" + path + "'")
        .hasMessageContaining("'" + "n".repeat(32) + "...'")
        .hasMessageContaining("256 characters long")
        .hasMessageContaining("longer than the limit of 255");
  }

  @Test
  void of_acceptsComponentOfExactlyMaxLength() throws Exception {
    String name = "n".repeat(StrataPath.MAX_COMPONENT_LENGTH);
    assertThat(StrataPath.of("/dir/" + name).name()).isEqualTo(name);
  }

  @Test
  void invalidPathException_carriesTheInvalidPathCode() {
    assertThatThrownBy(() -> StrataPath.of("rel"))
        .isInstanceOfSatisfying(InvalidPathException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PATH));
  }

  // ---- valid paths ----

  @Test
  void of_root_isTheRootConstant() throws Exception {
    StrataPath root = StrataPath.of("/");
    assertThat(root).isSameAs(StrataPath.ROOT);
    assertThat(root.isRoot()).isTrue();
    assertThat(root.depth()).isZero();
    assertThat(root.components()).isEmpty();
    assertThat(root.name()).isEmpty();
    assertThat(root.toString()).isEqualTo("/");
  }

  @Test
  void of_acceptsUnicodeNames() throws Exception {
    StrataPath p = StrataPath.of("/données/日本語/файл-😀");
    assertThat(p.components()).containsExactly("données", "日本語", "файл-😀");
    assertThat(p.name()).isEqualTo("файл-😀");
    assertThat(p.toString()).isEqualTo("/données/日本語/файл-😀");
  }

  @Test
  void of_acceptsNamesWithSpaces() throws Exception {
    StrataPath p = StrataPath.of("/my dir/ file name.txt ");
    assertThat(p.components()).containsExactly("my dir", " file name.txt ");
    assertThat(p.isRoot()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"/...", "/.hidden", "/a/..b", "/a./b", "/-", "/a:b", "/a\\b"})
  void of_acceptsNamesThatOnlyLookLikeDots(String path) throws Exception {
    assertThat(StrataPath.of(path).toString()).isEqualTo(path);
  }

  @Test
  void components_areUnmodifiable() throws Exception {
    StrataPath p = StrataPath.of("/a/b");
    assertThatThrownBy(() -> p.components().add("c")).isInstanceOf(UnsupportedOperationException.class);
    assertThat(p.components()).containsExactly("a", "b");
  }

  // ---- navigation ----

  @Test
  void parent_ofRoot_isNull() {
    assertThat(StrataPath.ROOT.parent()).isNull();
  }

  @Test
  void parent_ofTopLevel_isRoot() throws Exception {
    assertThat(StrataPath.of("/a").parent()).isSameAs(StrataPath.ROOT);
  }

  @Test
  void parent_ofDeepPath_dropsLastComponent() throws Exception {
    StrataPath parent = StrataPath.of("/a/b/c").parent();
    assertThat(parent.toString()).isEqualTo("/a/b");
    assertThat(parent.components()).containsExactly("a", "b");
    assertThat(parent.name()).isEqualTo("b");
    assertThat(parent).isEqualTo(StrataPath.of("/a/b"));
    assertThat(parent.hashCode()).isEqualTo(StrataPath.of("/a/b").hashCode());
    assertThat(parent.parent().parent()).isSameAs(StrataPath.ROOT);
  }

  @Test
  void name_isTheLastComponent() throws Exception {
    assertThat(StrataPath.of("/a/b/c.txt").name()).isEqualTo("c.txt");
    assertThat(StrataPath.of("/top").name()).isEqualTo("top");
  }

  @Test
  void child_ofRoot_hasNoDoubleSlash() throws Exception {
    StrataPath c = StrataPath.ROOT.child("a");
    assertThat(c.toString()).isEqualTo("/a");
    assertThat(c.parent()).isSameAs(StrataPath.ROOT);
  }

  @Test
  void child_appendsOneComponent() throws Exception {
    StrataPath dir = StrataPath.of("/a/b");
    StrataPath c = dir.child("c d");
    assertThat(c.toString()).isEqualTo("/a/b/c d");
    assertThat(c.name()).isEqualTo("c d");
    assertThat(c.parent()).isEqualTo(dir);
    assertThat(c.depth()).isEqualTo(3);
  }

  @Test
  void child_rejectsEmptyName() throws Exception {
    StrataPath dir = StrataPath.of("/a");
    assertThatThrownBy(() -> dir.child("")).isInstanceOf(InvalidPathException.class);
  }

  @Test
  void child_rejectsDotDotName() throws Exception {
    StrataPath dir = StrataPath.of("/a");
    assertThatThrownBy(() -> dir.child(".."))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("'..' component");
  }

  @Test
  void child_rejectsControlCharacterInName() throws Exception {
    StrataPath dir = StrataPath.of("/a");
    assertThatThrownBy(() -> dir.child("x\ty"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("control character U+0009");
  }

  @Test
  void child_rejectsNameContainingSlash_soTheResultIsAlwaysADirectChild() throws Exception {
    StrataPath dir = StrataPath.of("/a");
    assertThatThrownBy(() -> dir.child("b/c"))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("b/c")
        .hasMessageContaining("/");
    assertThatThrownBy(() -> StrataPath.ROOT.child("/b"))
        .isInstanceOf(InvalidPathException.class);
  }

  @Test
  void isUnder_selfAndDescendants() throws Exception {
    StrataPath a = StrataPath.of("/a");
    assertThat(a.isUnder(a)).isTrue();
    assertThat(StrataPath.of("/a/b").isUnder(a)).isTrue();
    assertThat(StrataPath.of("/a/b/c").isUnder(a)).isTrue();
    assertThat(StrataPath.of("/a/b/c").isUnder(StrataPath.of("/a/b"))).isTrue();
  }

  @Test
  void isUnder_siblingWithCommonPrefix_isNotUnder() throws Exception {
    assertThat(StrataPath.of("/ab").isUnder(StrataPath.of("/a"))).isFalse();
    assertThat(StrataPath.of("/a/bc/d").isUnder(StrataPath.of("/a/b"))).isFalse();
    assertThat(StrataPath.of("/a b").isUnder(StrataPath.of("/a"))).isFalse();
  }

  @Test
  void isUnder_ancestorIsNotUnderDescendant() throws Exception {
    assertThat(StrataPath.of("/a").isUnder(StrataPath.of("/a/b"))).isFalse();
    assertThat(StrataPath.ROOT.isUnder(StrataPath.of("/a"))).isFalse();
  }

  @Test
  void isUnder_everythingIsUnderRoot() throws Exception {
    assertThat(StrataPath.ROOT.isUnder(StrataPath.ROOT)).isTrue();
    assertThat(StrataPath.of("/x").isUnder(StrataPath.ROOT)).isTrue();
    assertThat(StrataPath.of("/x/y/z").isUnder(StrataPath.ROOT)).isTrue();
  }

  @Test
  void equals_comparesThePathText() throws Exception {
    assertThat(StrataPath.of("/a/b")).isEqualTo(StrataPath.of("/a/b"));
    assertThat(StrataPath.of("/a/b")).isNotEqualTo(StrataPath.of("/a/B"));
    assertThat(StrataPath.of("/a/b")).isNotEqualTo("/a/b");
  }

  // ---- normalise (user input) ----

  @Test
  void normalise_collapsesSlashesAndDropsTrailingSlash() {
    assertThat(StrataPath.normalise("//a//b/")).isEqualTo("/a/b");
  }

  @Test
  void normalise_dropsDotAndResolvesDotDot() {
    assertThat(StrataPath.normalise("a/./b/../c")).isEqualTo("/a/c");
    assertThat(StrataPath.normalise("/a/b/c/../../d")).isEqualTo("/a/d");
  }

  @Test
  void normalise_dotDotAboveRoot_staysAtRoot() {
    assertThat(StrataPath.normalise("/..")).isEqualTo("/");
    assertThat(StrataPath.normalise("../../a")).isEqualTo("/a");
    assertThat(StrataPath.normalise("/a/../../b")).isEqualTo("/b");
  }

  @Test
  void normalise_relativeInput_isResolvedAgainstRoot() {
    assertThat(StrataPath.normalise("dir/file")).isEqualTo("/dir/file");
    assertThat(StrataPath.normalise("file")).isEqualTo("/file");
  }

  @Test
  void normalise_rootForms_giveRoot() {
    assertThat(StrataPath.normalise("/")).isEqualTo("/");
    assertThat(StrataPath.normalise("///")).isEqualTo("/");
    assertThat(StrataPath.normalise(".")).isEqualTo("/");
    assertThat(StrataPath.normalise("./")).isEqualTo("/");
  }

  @Test
  void normalise_emptyOrNull_isReturnedUnchanged_soOfReportsItAsEmpty() {
    assertThat(StrataPath.normalise("")).isEqualTo("");
    assertThat(StrataPath.normalise(null)).isNull();
    assertThatThrownBy(() -> StrataPath.of(StrataPath.normalise("")))
        .isInstanceOf(InvalidPathException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void normalise_keepsSpacesAndUnicode() {
    assertThat(StrataPath.normalise("/my dir//日本/")).isEqualTo("/my dir/日本");
  }

  @Test
  void normalise_outputIsAcceptedByOf() throws Exception {
    for (String input : List.of("//a//b/", "a/./b/../c", "x/", "/", "../y", "/p/q/./r/")) {
      String n = StrataPath.normalise(input);
      assertThat(StrataPath.of(n).toString()).as(input).isEqualTo(n);
    }
  }
}
