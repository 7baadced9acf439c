package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CliPathsTest {
  @Test
  void normalise_makesUserInputAbsoluteAndClean() {
    assertThat(CliPaths.normalise("a")).isEqualTo("/a");
    assertThat(CliPaths.normalise("/a/")).isEqualTo("/a");
    assertThat(CliPaths.normalise("//a//b/./../c/")).isEqualTo("/a/c");
    assertThat(CliPaths.normalise("/")).isEqualTo("/");
  }

  @Test
  void childAndName_handleTheRoot() {
    assertThat(CliPaths.child("/", "x")).isEqualTo("/x");
    assertThat(CliPaths.child("/a", "x")).isEqualTo("/a/x");
    assertThat(CliPaths.name("/a/x")).isEqualTo("x");
    assertThat(CliPaths.name("/")).isEmpty();
  }

  @Test
  void firstComponentBelow_isTheChildOfTheAncestorOnTheWay() {
    assertThat(CliPaths.firstComponentBelow("/a", "/a/b/c")).isEqualTo("b");
    assertThat(CliPaths.firstComponentBelow("/", "/a/b")).isEqualTo("a");
    assertThat(CliPaths.firstComponentBelow("/a", "/a")).isNull();
    assertThat(CliPaths.firstComponentBelow("/a", "/ab/c")).isNull();
  }

  @Test
  void treeOrder_putsADirectoryBeforeItsChildren_andChildrenBeforeLaterSiblings() {
    List<String> paths = new ArrayList<>(List.of("/a-b", "/a/x", "/b", "/a", "/a/x/y", "/a/w"));
    paths.sort(CliPaths.TREE_ORDER);
    assertThat(paths).containsExactly("/a", "/a/w", "/a/x", "/a/x/y", "/a-b", "/b");
  }
}
