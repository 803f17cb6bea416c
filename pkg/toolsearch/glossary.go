package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Catalogues mix languages: a tool described only in Chinese ("获取 BBC
// 新闻") shares no word with an English request ("latest BBC news"), nor a
// Chinese request with an English tool. zhGlossary gives common Chinese
// words of tools and requests their English words; a text with Chinese
// in it (a tool's, when indexed, or a request) is read with the English
// words of the glossary's words it holds, as if written beside it. Kept
// by hand: no Chinese–English dictionary comes with Debian's packages.
var zhGlossary = map[string]string{
	"获取": "get", "搜索": "search", "查询": "search query", "搜": "search", "检索": "search", "列出": "list",
	"新闻": "news", "资讯": "news", "快讯": "news", "要闻": "news headlines", "头条": "headlines",
	"热榜": "trending top", "热搜": "trending", "热门": "popular trending", "热点": "trending", "排行榜": "ranking top",
	"榜单": "ranking", "趋势": "trend", "话题": "topic", "实时": "real time",
	"科技": "technology tech", "数码": "digital gadget", "产品": "product", "商品": "product goods",
	"优惠": "deal discount", "购物": "shopping", "值得买": "worth buying", "评测": "review", "推荐": "recommend",
	"游戏": "game gaming", "视频": "video", "音乐": "music", "动画": "animation anime", "电影": "movie film",
	"电视剧": "tv series", "综艺": "variety show", "图书": "book", "书籍": "book", "小说": "novel",
	"读书": "reading book", "文章": "article", "教程": "tutorial", "娱乐": "entertainment", "体育": "sports",
	"财经": "finance", "金融": "finance", "经济": "economy", "商业": "business", "创业": "startup",
	"政治": "politics", "健康": "health", "教育": "education", "国际": "international world",
	"技术": "technology", "开发": "development developer", "软件": "software", "人工智能": "ai",
	"云计算": "cloud computing", "前端": "frontend", "后端": "backend", "互联网": "internet",
	"菜谱": "recipe", "食谱": "recipe", "菜品": "dish", "做菜": "cook dish", "做饭": "cook", "吃": "eat",
	"菜": "dish", "早餐": "breakfast", "甜品": "dessert", "饮品": "drink", "膳食": "meal diet",
	"过敏": "allergy", "忌口": "dietary restriction", "购物清单": "shopping list", "食材": "ingredient",
	"人数": "number people", "卡牌": "card", "游戏王": "yugioh", "图片": "image picture", "效果": "effect",
	"八字": "bazi", "农历": "lunar calendar", "公历": "solar calendar", "阳历": "solar calendar",
	"黄历": "almanac calendar", "性别": "gender", "时间": "time", "日期": "date", "当前": "current",
	"明天": "tomorrow", "今天": "today", "今晚": "tonight", "出生": "born birth",
	"火车": "train", "车票": "train ticket", "余票": "ticket", "车站": "station", "列车": "train",
	"车次": "train", "中转": "transfer", "换乘": "transfer interline", "高铁": "high speed rail train", "城市": "city",
	"幻灯片": "slide", "文件": "file", "目录": "directory", "图像": "image", "转换": "convert",
	"删除": "delete", "插入": "insert", "复制": "copy", "保存": "save", "代码": "code",
	"组件": "component", "文档": "documentation docs", "示例": "example", "更新日志": "changelog",
	"鸣潮": "wuthering waves game", "声骸": "echo echoes", "套装": "set", "养成": "build",
	"网上": "web online", "上网": "web online", "周末": "weekend",
	"版本": "version", "网页": "webpage", "链接": "link", "摘要": "summary", "必应": "bing",
	"角色": "character", "技能": "skill", "攻略": "guide", "档案": "profile",
	"天气": "weather", "股票": "stock", "价格": "price", "多少钱": "price cost", "汇率": "exchange rate",
	"地图": "map", "翻译": "translate", "论文": "paper", "天气预报": "weather forecast", "票": "ticket",
	"纽约时报": "new york times", "苹果": "apple", "微博": "weibo", "知乎": "zhihu", "抖音": "douyin tiktok",
	"哔哩哔哩": "bilibili", "豆瓣": "douban", "微信": "wechat", "腾讯": "tencent", "网易": "netease",
}

// zhLongest is the longest key of zhGlossary, in runes; maxGlossBytes
// bounds how much of a text is glossed.
const (
	zhLongest     = 4
	maxGlossBytes = 4096
)

// glossed returns s with the English words of the glossary's words in its
// Chinese text appended (the longest word at each place, in its first
// maxGlossBytes; s itself when it has none).
func glossed(s string) string {
	if !hasHan(s) {
		return s
	}
	t := cut(s, maxGlossBytes)
	var b strings.Builder
	for i := 0; i < len(t); {
		var ends [zhLongest]int // ends[k-1]: the byte after k runes from i
		n := 0
		for j := i; n < zhLongest && j < len(t); n++ {
			_, size := utf8.DecodeRuneInString(t[j:])
			j += size
			ends[n] = j
		}
		next := ends[0]
		for k := n; k >= 1; k-- {
			if w, ok := zhGlossary[t[i:ends[k-1]]]; ok {
				b.WriteByte(' ')
				b.WriteString(w)
				next = ends[k-1]
				break
			}
		}
		i = next
	}
	if b.Len() == 0 {
		return s
	}
	return s + " ·" + b.String()
}

// hasHan reports whether s has a Han character.
func hasHan(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x2E80 && unicode.Is(unicode.Han, r) {
			return true
		}
		i += n
	}
	return false
}
